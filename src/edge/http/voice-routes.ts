/**
 * Public REST for voice rooms under /api/v1/voice, for apps and browsers. The caller is
 * the JWT's user in the JWT's app; any node serves any room (the API forwards to the
 * owner). Retries: send the same `request_id` (body) or `Idempotency-Key` header.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Authenticator } from '../../accounts/tokens.js';
import { listLobby } from '../../adapters/sql/voice-room/catalog.js';
import { balanceOf } from '../../adapters/sql/voice-room/wallet.js';
import type { Database } from '../../adapters/sql/schema.js';
import type { AuthIdentity } from '../../accounts/tokens.js';
import { AppError } from '../../shared/errors.js';
import type { CreationQuota, CreationTicket } from '../quotas.js';
import type { RpcName } from '../voice/requests.js';
import { createdRoomIdOf, type VoiceRoomApi } from '../voice/voice-api.js';
import { authOf, requireAuth } from './auth-routes.js';
import { sendOk } from './envelope.js';

type Body = Record<string, unknown>;

function bodyOf(request: FastifyRequest): Body {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('validation', 'INVALID_ARGUMENT', 'body must be a JSON object');
  }
  return body as Body;
}

/**
 * The body's `request_id`, else the `Idempotency-Key` header, else a new id: a command sent
 * without one is a new command each time (and still has an id the owner records).
 */
function requestIdOf(request: FastifyRequest, body: Body): unknown {
  if (body.request_id !== undefined) return body.request_id;
  const header = request.headers['idempotency-key'];
  return typeof header === 'string' ? header : `rest:${randomUUID()}`;
}

function roomIdOf(request: FastifyRequest): string {
  return (request.params as { room_id: string }).room_id;
}

/** Room-creation limits of the REST API (the gRPC API is the cluster's own, trusted). */
export interface VoiceCreateQuota {
  readonly quota: CreationQuota;
  /** Whether the room exists already (any status). */
  readonly roomExists: (appCode: string, roomId: string) => Promise<boolean>;
}

export function registerVoiceRoutes(
  app: FastifyInstance,
  deps: {
    api: VoiceRoomApi;
    auth: Authenticator;
    db: Kysely<Database>;
    createQuota?: VoiceCreateQuota;
  },
): void {
  const { api, db } = deps;
  const authed = { preHandler: requireAuth(deps.auth) };

  /** A retry of a creation that committed is not a new creation: it passes unchecked. */
  const admitCreation = async (
    me: AuthIdentity,
    requestId: string | undefined,
  ): Promise<CreationTicket | null> => {
    const limits = deps.createQuota;
    if (!limits) return null;
    if (
      requestId &&
      (await limits.roomExists(me.appCode, createdRoomIdOf(me.appCode, requestId)))
    ) {
      return null;
    }
    return limits.quota.admit(me.appCode, me.userId);
  };

  /** A room command on behalf of the caller: `fields` maps the body to the RPC request. */
  const command = (
    path: string,
    method: RpcName,
    fields: (me: string, body: Body) => Body,
    status = 200,
  ) =>
    app.post(`/api/v1/voice/rooms/:room_id${path}`, authed, async (request, reply) => {
      const me = authOf(request);
      const body = bodyOf(request);
      const data = await api.call(method, {
        app_code: me.appCode,
        room_id: roomIdOf(request),
        request_id: requestIdOf(request, body),
        ...fields(me.userId, body),
      });
      return sendOk(request, reply, data, status);
    });

  app.post('/api/v1/voice/rooms', authed, async (request, reply) => {
    const me = authOf(request);
    const body = bodyOf(request);
    const requestId = requestIdOf(request, body);
    const ticket = await admitCreation(me, typeof requestId === 'string' ? requestId : undefined);
    let data: unknown;
    try {
      data = await api.call('CreateRoom', {
        app_code: me.appCode,
        request_id: requestId,
        owner_user_id: me.userId,
        title: body.title,
        // Only an absent field takes the default: a null is a wrong type, refused.
        seat_count: body.seat_count === undefined ? 8 : body.seat_count,
      });
    } catch (error) {
      await ticket?.refund().catch(() => undefined); // nothing created: the place is free
      throw error;
    }
    // A copy of the request raced past the retry check and found the room made: nothing new.
    if ((data as { duplicate?: unknown }).duplicate === true) {
      await ticket?.refund().catch(() => undefined);
    }
    return sendOk(request, reply, data, 201);
  });

  app.get('/api/v1/voice/rooms', authed, async (request, reply) => {
    const me = authOf(request);
    const q = request.query as { limit?: string; offset?: string };
    const limit = clampInt(q.limit, 20, 1, 50);
    const offset = clampInt(q.offset, 0, 0, 10_000);
    return sendOk(request, reply, await listLobby(db, me.appCode, limit, offset));
  });

  app.get('/api/v1/voice/rooms/:room_id', authed, async (request, reply) => {
    const me = authOf(request);
    const data = await api.call('GetRoom', { app_code: me.appCode, room_id: roomIdOf(request) });
    return sendOk(request, reply, data);
  });

  command('/join', 'JoinRoom', (me) => ({ user_id: me }));
  command('/leave', 'LeaveRoom', (me) => ({ user_id: me }));
  command('/heartbeat', 'RoomHeartbeat', (me) => ({ user_id: me }));
  command('/close', 'CloseRoom', (me) => ({ operator_user_id: me }));
  command('/kick', 'KickUser', (me, b) => ({ operator_user_id: me, user_id: b.user_id }));
  command('/unban', 'UnbanUser', (me, b) => ({ operator_user_id: me, user_id: b.user_id }));
  command('/admins', 'SetRoomAdmin', (me, b) => ({
    operator_user_id: me,
    user_id: b.user_id,
    is_admin: b.is_admin,
  }));
  command('/seats/lock', 'SetMicSeatLock', (me, b) => ({
    operator_user_id: me,
    seat_index: b.seat_index,
    locked: b.locked,
  }));
  command('/mic/up', 'MicUp', (me, b) => ({ user_id: me, seat_index: b.seat_index }));
  command('/mic/down', 'MicDown', (me, b) =>
    b.user_id !== undefined && b.user_id !== me
      ? { user_id: b.user_id, operator_user_id: me }
      : { user_id: me },
  );
  command('/mic/change', 'ChangeMicSeat', (me, b) => ({ user_id: me, seat_index: b.seat_index }));
  command('/mic/confirm', 'ConfirmMicPublishing', (me, b) => ({
    user_id: me,
    mic_session_id: b.mic_session_id,
  }));
  command('/gifts', 'SendGift', (me, b) => ({
    sender_user_id: me,
    receiver_user_ids: b.receiver_user_ids,
    gift_id: b.gift_id,
    count: b.count === undefined ? 1 : b.count,
  }));

  app.get('/api/v1/voice/wallet', authed, async (request, reply) => {
    const me = authOf(request);
    return sendOk(request, reply, { balance: await balanceOf(db, me.appCode, me.userId) });
  });
}

/** A query-string integer: decimal digits only (no `0x10`, `1e3`, `""` or spaces). */
function clampInt(raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) {
    throw new AppError(
      'validation',
      'INVALID_ARGUMENT',
      `not a decimal integer: ${raw.slice(0, 20)}`,
    );
  }
  return Math.min(max, Math.max(min, Number(raw)));
}
