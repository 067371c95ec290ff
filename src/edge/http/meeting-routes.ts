/**
 * Public REST for meetings under /api/v1/meeting (meeting-api.md): the routes the endpoints
 * of ../meeting/commands.ts declare. The caller is the JWT's user in the JWT's app; any
 * node serves any meeting (the API forwards to the owner). Bodies are strict: an unknown
 * field or a wrong JSON type answers 400 and changes nothing. Retries: send the same
 * `request_id` (body) or `Idempotency-Key` header; the first outcome is the answer.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../accounts/tokens.js';
import { ROOM_CODE_PATTERN } from '../../domain/meeting/decide-membership.js';
import { refuse } from '../../domain/meeting/errors.js';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';
import { sendOk } from '../../shared/http-envelope.js';
import { meetingCalls, meetingMethods } from '../meeting/commands.js';
import type { MeetingApi } from '../meeting/meeting-api.js';
import { authOf, requireAuth } from './auth-routes.js';
import { meetingRouteDoc } from './meeting-route-docs.js';

type Body = Record<string, unknown>;

function bodyOf(request: FastifyRequest): Body {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw errors.INVALID_ARGUMENT('body must be a JSON object');
  }
  return body as Body;
}

/** Query strings are text: only decimal digits become integers (no `0x10`, `1e3`, ``). */
function queryOf(request: FastifyRequest): Body {
  const out: Body = {};
  for (const [name, value] of Object.entries(request.query as Record<string, unknown>)) {
    if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) {
      throw errors.INVALID_ARGUMENT(`${name}: not a decimal integer`);
    }
    out[name] = Number(value);
  }
  return out;
}

/** The body's `request_id`, else the `Idempotency-Key` header, else a new id. */
function requestIdOf(request: FastifyRequest, body: Body): unknown {
  if (body.request_id !== undefined) return body.request_id;
  const header = request.headers['idempotency-key'];
  return typeof header === 'string' ? header : `rest:${randomUUID()}`;
}

export function registerMeetingRoutes(
  app: FastifyInstance,
  deps: { api: MeetingApi; auth: Authenticator },
): void {
  const authed = { preHandler: requireAuth(deps.auth) };
  for (const method of meetingMethods) {
    const declared = meetingCalls[method];
    const route = declared.rest;
    if (!route) continue; // the WebSocket signalling's own calls have no route
    app.route({
      method: route.method,
      url: `/api/v1/meeting${route.path}`,
      ...authed,
      ...meetingRouteDoc(method, declared),
      handler: async (request, reply) => {
        const me = authOf(request);
        const body = route.method === 'GET' ? queryOf(request) : bodyOf(request);
        // Strict first: a body naming the caller, the app or the meeting is refused.
        const checked = declared.body.safeParse(body);
        if (!checked.success) {
          const issue = checked.error.issues[0]!;
          throw errors.INVALID_ARGUMENT(`${issue.path.join('.') || 'body'}: ${issue.message}`);
        }
        const req: Body = { ...body, app_code: me.appCode, caller_id: me.userId };
        if (declared.scope === 'room') {
          const code = (request.params as { code: string }).code;
          // Not a code at all: no meeting has it, and no cell is touched.
          if (!ROOM_CODE_PATTERN.test(code)) throw AppError.from(refuse('MEETING_NOT_FOUND'));
          req.room_code = code;
        }
        for (const name of Object.keys(declared.params ?? {})) {
          req[name] = (request.params as Record<string, string>)[name];
        }
        if (declared.kind === 'command') req.request_id = requestIdOf(request, body);
        const data = await deps.api.call(method, req);
        return sendOk(request, reply, data, route.status ?? 200);
      },
    });
  }
}
