/**
 * The notification centre over REST (JWT): the caller's own notifications only, in the
 * token's app. Query strings and the path id are taken strictly: decimal digits, in range,
 * once (no `0x10`, `1e3`, `-1`, `""`, repeats).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../accounts/tokens.js';
import {
  DEFAULT_PAGE,
  MAX_PAGE,
  type NotificationCentre,
} from '../../notifications/notification-centre.js';
import { errors } from '../../shared/error-codes.js';
import { sendOk } from '../../shared/http-envelope.js';
import { authOf, requireAuth } from './auth-routes.js';

const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/** A notification id: a positive decimal integer up to 2^53 − 1. */
function idOf(raw: unknown, name: string): number {
  const n = typeof raw === 'string' && ID_PATTERN.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw errors.BAD_REQUEST(`${name} must be a positive integer`);
  return n;
}

function limitOf(raw: unknown): number {
  if (raw === undefined) return DEFAULT_PAGE;
  const n = typeof raw === 'string' && /^[0-9]{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_PAGE)) {
    throw errors.BAD_REQUEST(`limit must be an integer from 1 to ${MAX_PAGE}`);
  }
  return n;
}

export function registerNotificationRoutes(
  app: FastifyInstance,
  deps: { centre: NotificationCentre; auth: Authenticator },
): void {
  const { centre } = deps;
  const authed = { preHandler: requireAuth(deps.auth) };
  const query = (request: FastifyRequest) => request.query as Record<string, unknown>;

  app.get('/api/v1/notifications', authed, async (request, reply) => {
    const me = authOf(request);
    const q = query(request);
    const limit = limitOf(q.limit);
    const beforeId = q.before_id === undefined ? null : idOf(q.before_id, 'before_id');
    return sendOk(request, reply, await centre.list(me.appCode, me.userId, { beforeId, limit }));
  });

  app.get('/api/v1/notifications/unread-count', authed, async (request, reply) => {
    const me = authOf(request);
    return sendOk(request, reply, { count: await centre.unreadCount(me.appCode, me.userId) });
  });

  app.post('/api/v1/notifications/read-all', authed, async (request, reply) => {
    const me = authOf(request);
    return sendOk(request, reply, { updated: await centre.markAllRead(me.appCode, me.userId) });
  });

  app.post('/api/v1/notifications/:id/read', authed, async (request, reply) => {
    const me = authOf(request);
    const id = idOf((request.params as { id: string }).id, 'id');
    return sendOk(request, reply, await centre.markRead(me.appCode, me.userId, id));
  });
}
