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
import { declaredReply } from '../declared-reply.js';
import {
  Notification,
  NotificationPage,
  ReadAll,
  UnreadCount,
} from '../../notifications/replies.js';
import { authOf, requireAuth } from './auth-routes.js';
import { documented, replySchemaOf } from './openapi.js';

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

const idParam = (description: string) => ({
  type: 'integer',
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: `${description} (decimal digits only)`,
});
/** These POSTs read no body: an empty object, or none. */
const noBody = { type: 'object', description: 'Nothing: the route reads no body' };

/** The documentation (./openapi.ts): never used to validate (the checks above do). */
const docs = {
  list: documented({
    operationId: 'listNotifications',
    tag: 'notifications',
    access: 'user',
    summary: "The caller's notifications, newest first",
    query: {
      type: 'object',
      properties: {
        before_id: idParam('Only notifications older than this id: the last id of a page'),
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_PAGE,
          default: DEFAULT_PAGE,
          description: 'Page size (decimal digits only)',
        },
      },
    },
    data: replySchemaOf(NotificationPage),
    responses: { 200: '`{list, has_more}`' },
  }),
  unreadCount: documented({
    operationId: 'countUnreadNotifications',
    tag: 'notifications',
    access: 'user',
    summary: "How many of the caller's notifications are unread",
    data: replySchemaOf(UnreadCount),
    responses: { 200: '`{count}`' },
  }),
  readAll: documented({
    operationId: 'readAllNotifications',
    tag: 'notifications',
    access: 'user',
    summary: "Mark all the caller's notifications read",
    body: noBody,
    data: replySchemaOf(ReadAll),
    responses: { 200: '`{updated}`: how many were unread' },
  }),
  read: documented({
    operationId: 'readNotification',
    tag: 'notifications',
    access: 'user',
    summary: 'Mark one notification read (again: the same answer, first read time kept)',
    params: {
      type: 'object',
      required: ['id'],
      properties: { id: idParam('The notification id') },
    },
    body: noBody,
    data: replySchemaOf(Notification),
    refusals: [errors.NOTIFICATION_NOT_FOUND],
    responses: {
      200: 'The notification, read',
      404: "No such notification of the caller's (NOTIFICATION_NOT_FOUND), nothing changed",
    },
  }),
};

export function registerNotificationRoutes(
  app: FastifyInstance,
  deps: { centre: NotificationCentre; auth: Authenticator },
): void {
  const { centre } = deps;
  const authed = { preHandler: requireAuth(deps.auth) };
  const query = (request: FastifyRequest) => request.query as Record<string, unknown>;

  app.get('/api/v1/notifications', { ...authed, ...docs.list }, async (request, reply) => {
    const me = authOf(request);
    const q = query(request);
    const limit = limitOf(q.limit);
    const beforeId = q.before_id === undefined ? null : idOf(q.before_id, 'before_id');
    const page = await centre.list(me.appCode, me.userId, { beforeId, limit });
    return sendOk(request, reply, declaredReply(NotificationPage, 'listNotifications', page));
  });

  app.get(
    '/api/v1/notifications/unread-count',
    { ...authed, ...docs.unreadCount },
    async (request, reply) => {
      const me = authOf(request);
      const count = await centre.unreadCount(me.appCode, me.userId);
      return sendOk(request, reply, declaredReply(UnreadCount, 'countUnread', { count }));
    },
  );

  app.post(
    '/api/v1/notifications/read-all',
    { ...authed, ...docs.readAll },
    async (request, reply) => {
      const me = authOf(request);
      const updated = await centre.markAllRead(me.appCode, me.userId);
      return sendOk(request, reply, declaredReply(ReadAll, 'readAll', { updated }));
    },
  );

  app.post(
    '/api/v1/notifications/:id/read',
    { ...authed, ...docs.read },
    async (request, reply) => {
      const me = authOf(request);
      const id = idOf((request.params as { id: string }).id, 'id');
      const read = await centre.markRead(me.appCode, me.userId, id);
      return sendOk(request, reply, declaredReply(Notification, 'readNotification', read));
    },
  );
}
