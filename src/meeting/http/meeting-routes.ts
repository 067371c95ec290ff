/**
 * Public REST for meetings under /api/v1/meeting (meeting-api.md): the routes the endpoints
 * of ../api/commands.ts declare. The caller is the JWT's user in the JWT's app; any
 * node serves any meeting (the API forwards to the owner). Bodies are strict: an unknown
 * field or a wrong JSON type answers 400 and changes nothing. Retries: send the same
 * `request_id` (body) or `Idempotency-Key` header; the first outcome is the answer. A
 * command with neither is a new command each time (not retry-safe).
 *
 * Limits (../api/limits.ts): creations per host (../../edge/quotas.ts, as for voice rooms; a
 * retry of a create is not counted again, a create that made nothing gives its place back);
 * a user or client address that named too many unknown codes
 * gets 429 for every code until its window ends; chat lines are counted per user, a retry of
 * a sent line answering its first outcome even past the limit.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../accounts/tokens.js';
import { ROOM_CODE_PATTERN } from '../domain/decide-membership.js';
import { refuse } from '../domain/errors.js';
import { errors } from '../../shared/error-codes.js';
import { parseInput } from '../../shared/parse-input.js';
import { AppError, RateLimitedError } from '../../shared/errors.js';
import { sendOk } from '../../shared/http-envelope.js';
import { cellRequestId, meetingCalls, meetingMethods } from '../api/commands.js';
import type { RestRoute } from '../api/declaration.js';
import type { MeetingLimits } from '../api/limits.js';
import type { MeetingApi } from '../api/meeting-api.js';
import type { MeetingStore } from '../api/meeting-store.js';
import type { CreationQuota, CreationTicket } from '../../edge/quotas.js';
import { authOf, requireAuth } from '../../edge/http/auth-routes.js';
import { meetingRouteDoc } from './meeting-route-docs.js';
import { registerRecordingDownload } from './recording-download.js';

type Body = Record<string, unknown>;

/** Who asks what, as a route's limit sees it. */
interface Admitted {
  readonly appCode: string;
  readonly userId: string;
  readonly roomCode: string | undefined;
  /** The cell's request id (the caller's id, scoped to the caller), if one was named. */
  readonly requestKey: string | undefined;
}

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

/**
 * The body's `request_id`, else the `Idempotency-Key` header, else none: a command sent
 * without either is a new command each time, and no retry can name it, so its outcome is
 * not kept.
 */
function requestIdOf(request: FastifyRequest, body: Body): string | undefined {
  // The body was checked against its schema: a request_id there is a string.
  if (typeof body.request_id === 'string') return body.request_id;
  const header = request.headers['idempotency-key'];
  return typeof header === 'string' ? header : undefined;
}

const MEETING_NOT_FOUND = 'MEETING_NOT_FOUND';

export interface MeetingRouteDeps {
  readonly api: MeetingApi;
  readonly auth: Authenticator;
  readonly limits: MeetingLimits;
  /** Tells a retried chat line or create from a new one. */
  readonly store: MeetingStore;
  /** Meeting creations per host (rate and open meetings), like the voice rooms'. */
  readonly createQuota: CreationQuota;
}

export function registerMeetingRoutes(app: FastifyInstance, deps: MeetingRouteDeps): void {
  const { limits } = deps;
  /**
   * The route's limit, checked before the call; a ticket to give back when nothing was made.
   * A retry of a decided request is not counted again: a create that drew its code, a chat
   * line the meeting decided (it gets its first answer even past the limit).
   */
  const admit = async (
    limit: RestRoute['limit'],
    call: Admitted,
  ): Promise<CreationTicket | null> => {
    if (limit === 'create') {
      const known =
        call.requestKey && (await deps.store.hasCodeClaim(call.appCode, call.requestKey));
      return known ? null : deps.createQuota.admit(call.appCode, call.userId);
    }
    if (limit === 'chat') {
      try {
        await limits.admitChat(call.appCode, call.userId);
      } catch (error) {
        const { requestKey, roomCode } = call;
        if (!(error instanceof RateLimitedError) || !requestKey || !roomCode) throw error;
        if (!(await deps.store.requestDecided(call.appCode, roomCode, requestKey))) throw error;
      }
    }
    return null;
  };
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
        parseInput(declared.body, body);
        const req: Body = { ...body, app_code: me.appCode, caller_id: me.userId };
        const address = request.ip || null;
        if (declared.scope === 'room') {
          // A sweeper of codes learns nothing once over the limit: known codes answer 429 too.
          await limits.checkLookups(me.appCode, me.userId, address);
          req.room_code = (request.params as { code: string }).code;
        }
        for (const name of Object.keys(declared.params ?? {})) {
          req[name] = (request.params as Record<string, string>)[name];
        }
        const requestId = declared.kind === 'command' ? requestIdOf(request, body) : undefined;
        if (requestId !== undefined) req.request_id = requestId;
        const call: Admitted = {
          appCode: me.appCode,
          userId: me.userId,
          roomCode: typeof req.room_code === 'string' ? req.room_code : undefined,
          requestKey: cellRequestId({ caller_id: me.userId, request_id: requestId }),
        };
        try {
          // Not a code at all: no meeting has it, and no cell is touched.
          const code = req.room_code;
          if (typeof code === 'string' && !ROOM_CODE_PATTERN.test(code)) {
            throw AppError.from(refuse(MEETING_NOT_FOUND));
          }
          const ticket = await admit(route.limit, call);
          let data: unknown;
          try {
            data = await deps.api.call(method, req);
          } catch (error) {
            await ticket?.refund().catch(() => undefined); // nothing created: the place is free
            throw error;
          }
          return sendOk(request, reply, data, route.status ?? 200);
        } catch (error) {
          if (declared.scope === 'room' && (error as AppError).code === MEETING_NOT_FOUND) {
            await limits.lookupFailed(me.appCode, me.userId, address);
          }
          throw error;
        }
      },
    });
  }
  registerRecordingDownload(app, { api: deps.api, auth: deps.auth });
}
