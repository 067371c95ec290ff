/**
 * Public REST for voice rooms under /api/v1/voice, for apps and browsers: the routes the
 * RPCs of ../api/commands.ts declare, the lobby and the wallet. The caller is the JWT's
 * user in the JWT's app; any node serves any room (the API forwards to the owner).
 * Retries: send the same `request_id` (body) or `Idempotency-Key` header.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../accounts/tokens.js';
import type { AuthIdentity } from '../../accounts/tokens.js';
import type { CreationQuota, CreationTicket } from '../../edge/quotas.js';
import { declarationOf, rpcNames } from '../api/commands.js';
import type { Body, QueryParam, RestRoute } from '../api/declaration.js';
import type { VoiceRoomApi } from '../api/voice-api.js';
import { authOf, requireAuth } from '../../edge/http/auth-routes.js';
import { documented, replySchemaOf } from '../../edge/http/openapi.js';
import { declaredReply } from '../../edge/declared-reply.js';
import { GiftList, LobbyPage, Wallet } from '../api/replies.js';
import { voiceRouteDoc } from './voice-route-docs.js';
import { sendOk } from '../../shared/http-envelope.js';
import { errors } from '../../shared/error-codes.js';
import { JsonUserId, USER_ID_TEXT, userIdJson, userIdText } from '../../shared/user-id.js';
import { USER_FIELDS } from '../api/requests.js';
import type { VoiceRoomStore } from '../api/voice-store.js';

function bodyOf(request: FastifyRequest): Body {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw errors.INVALID_ARGUMENT('body must be a JSON object');
  }
  return body as Body;
}

/** What a REST caller may name a request (the cell's id adds the caller in front). */
const CALLER_REQUEST_ID = /^[\x21-\x7e]{1,100}$/;

/**
 * The body's `request_id`, else the `Idempotency-Key` header, else a new id (a command sent
 * without one is a new command each time), scoped to the caller: another user who sends
 * the same id makes a request of their own, never gets this caller's recorded answer.
 */
function requestIdOf(request: FastifyRequest, body: Body, callerId: string): string {
  const header = request.headers['idempotency-key'];
  const given = body.request_id !== undefined ? body.request_id : header;
  if (given === undefined) return `rest:${randomUUID()}`;
  if (typeof given !== 'string' || !CALLER_REQUEST_ID.test(given)) {
    throw errors.INVALID_ARGUMENT('request_id: 1-100 printable ASCII characters');
  }
  return `${callerId}:${given}`;
}

function roomIdOf(request: FastifyRequest): string {
  return (request.params as { room_id: string }).room_id;
}

const docs = {
  lobby: documented({
    operationId: 'listVoiceRooms',
    tag: 'voice rooms',
    summary: "The lobby: the app's open rooms",
    access: 'user',
    query: {
      type: 'object',
      properties: {
        limit: { type: 'integer', default: 20, description: 'Decimal digits, clamped to 1-50' },
        offset: { type: 'integer', default: 0, description: 'Decimal digits, clamped to 0-10000' },
      },
    },
    responses: { 200: 'A page of rooms' },
    data: replySchemaOf(LobbyPage),
  }),
  wallet: documented({
    operationId: 'getWallet',
    tag: 'voice rooms',
    summary: "The caller's wallet",
    access: 'user',
    responses: { 200: '`balance`' },
    data: replySchemaOf(Wallet),
  }),
  gifts: documented({
    operationId: 'listGifts',
    tag: 'voice rooms',
    summary: "The gifts one can send in the caller's app",
    description: 'The active gifts of the catalog (written with the admin API), cheapest first.',
    access: 'user',
    responses: { 200: '`list`: `{gift_id, name, price}` of each active gift' },
    data: replySchemaOf(GiftList),
  }),
};

export function registerVoiceRoutes(
  app: FastifyInstance,
  deps: {
    api: VoiceRoomApi;
    auth: Authenticator;
    store: VoiceRoomStore;
    createQuota?: CreationQuota;
  },
): void {
  const { api, store } = deps;
  const authed = { preHandler: requireAuth(deps.auth) };

  /** A retry of a creation that committed is not a new creation: it passes unchecked. */
  const admitCreation = async (
    me: AuthIdentity,
    requestId: string | undefined,
    creates: (appCode: string, requestId: string) => string,
  ): Promise<CreationTicket | null> => {
    const quota = deps.createQuota;
    if (!quota) return null;
    if (requestId && (await store.roomExists(me.appCode, creates(me.appCode, requestId)))) {
      return null;
    }
    return quota.admit(me.appCode, me.userId);
  };

  /** Runs a creation under the quota: a creation that made nothing gives its place back. */
  const underQuota = async (
    me: AuthIdentity,
    requestId: unknown,
    creates: (appCode: string, requestId: string) => string,
    run: () => Promise<unknown>,
  ): Promise<unknown> => {
    const ticket = await admitCreation(
      me,
      typeof requestId === 'string' ? requestId : undefined,
      creates,
    );
    let data: unknown;
    try {
      data = await run();
    } catch (error) {
      await ticket?.refund().catch(() => undefined); // nothing created: the place is free
      throw error;
    }
    // A copy of the request raced past the retry check and found the room made: nothing new.
    if ((data as { duplicate?: unknown }).duplicate === true) {
      await ticket?.refund().catch(() => undefined);
    }
    return data;
  };

  /** Every RPC that declares a REST route, on behalf of the caller (../api/commands.ts). */
  for (const method of rpcNames) {
    const declared = declarationOf(method);
    const route = declared.rest;
    if (!route) continue;
    app.route({
      method: route.method,
      url: `/api/v1/voice${route.path}`,
      ...authed,
      ...voiceRouteDoc(method, declared),
      handler: async (request, reply) => {
        const me = authOf(request);
        const body = route.method === 'GET' ? {} : bodyOf(request);
        const req: Body = {
          app_code: me.appCode,
          ...(route.path.includes(':room_id') ? { room_id: roomIdOf(request) } : {}),
          ...(declared.kind === 'command'
            ? { request_id: requestIdOf(request, body, me.userId) }
            : {}),
          ...fieldsOf(route, me.userId, body),
          ...queryFieldsOf(route, request.query),
        };
        const run = () => api.call(method, req);
        const data = route.creates
          ? await underQuota(me, req.request_id, route.creates, run)
          : await run();
        return sendOk(request, reply, data, route.status ?? 200);
      },
    });
  }

  app.get('/api/v1/voice/rooms', { ...authed, ...docs.lobby }, async (request, reply) => {
    const me = authOf(request);
    const q = request.query as { limit?: string; offset?: string };
    const limit = clampInt(q.limit, 20, 1, 50);
    const offset = clampInt(q.offset, 0, 0, 10_000);
    const page = await store.listLobby(me.appCode, limit, offset);
    const list = page.list.map((r) => ({ ...r, owner_user_id: userIdJson(r.owner_user_id) }));
    return sendOk(request, reply, declaredReply(LobbyPage, 'the lobby', { ...page, list }));
  });

  app.get('/api/v1/voice/wallet', { ...authed, ...docs.wallet }, async (request, reply) => {
    const me = authOf(request);
    const balance = await store.balanceOf(me.appCode, me.userId);
    return sendOk(request, reply, declaredReply(Wallet, 'the wallet', { balance }));
  });

  // The gift picker's list: what a gift costs, never whether a retired one exists.
  app.get('/api/v1/voice/gifts', { ...authed, ...docs.gifts }, async (request, reply) => {
    const me = authOf(request);
    const list = (await store.listGifts(me.appCode))
      .filter((g) => g.active)
      .sort((a, b) => a.price - b.price || (a.gift_id < b.gift_id ? -1 : 1))
      .map(({ gift_id, name, price }) => ({ gift_id, name, price }));
    return sendOk(request, reply, declaredReply(GiftList, 'the gift list', { list }));
  });
}

/** The request fields a route takes from the caller and the body (nothing else of the body). */
function fieldsOf(route: RestRoute, me: string, body: Body): Body {
  const read: Record<string, unknown> = {};
  for (const name of route.body ?? []) {
    read[name] =
      body[name] === undefined ? route.defaults?.[name] : userIdsAsText(name, body[name]);
  }
  if (route.fields) return route.fields(me, read);
  if (route.caller) read[route.caller] = me;
  return read;
}

/**
 * A body field as the request takes it: a user id (../api/requests.ts `USER_FIELDS`) is a
 * JSON number in the body and decimal text in the request; anything else is left as sent
 * (the request schema checks it).
 */
function userIdsAsText(name: string, value: unknown): unknown {
  const users = USER_FIELDS[name as keyof typeof USER_FIELDS];
  if (users === undefined) return value;
  const one = (id: unknown) => {
    const parsed = JsonUserId.safeParse(id);
    if (!parsed.success) {
      throw errors.INVALID_ARGUMENT(`${name}: a user id is a JSON integer (an account id)`);
    }
    return userIdText(parsed.data);
  };
  if (users === 'one') return one(value);
  // The list's length is the request schema's to check.
  return Array.isArray(value) ? value.map(one) : value;
}

/**
 * The request fields of a route's declared query parameters (../api/declaration.ts
 * `QueryParam`); a parameter it does not declare is not read.
 */
function queryFieldsOf(route: RestRoute, query: unknown): Body {
  const given = (query ?? {}) as Readonly<Record<string, unknown>>;
  const read: Record<string, unknown> = {};
  for (const [name, param] of Object.entries(route.query ?? {}) as [string, QueryParam][]) {
    const raw = Object.hasOwn(given, name) ? given[name] : undefined;
    // `?limit=1&limit=2` arrives as an array: which one was meant is not ours to guess.
    if (raw !== undefined && typeof raw !== 'string') {
      throw errors.INVALID_ARGUMENT(`${name}: give it once`);
    }
    const value = queryValue(name, param, raw);
    if (value !== undefined) read[name] = value;
  }
  return read;
}

/** One parameter's request value (undefined: leave the field out), or a 400 naming it. */
function queryValue(name: string, param: QueryParam, raw: string | undefined): unknown {
  switch (param.kind) {
    case 'integer': {
      if (raw === undefined) return param.default;
      if (!/^[0-9]+$/.test(raw)) {
        throw errors.INVALID_ARGUMENT(`${name}: not a decimal integer: ${raw.slice(0, 20)}`);
      }
      // However many digits: any number past `max` (even past 2^53) asks for the most there is.
      const value = Number(raw);
      if (value < param.min) throw errors.INVALID_ARGUMENT(`${name}: at least ${param.min}`);
      return Math.min(value, param.max);
    }
    case 'enum':
      if (raw === undefined || !param.values.includes(raw)) {
        throw errors.INVALID_ARGUMENT(`${name}: one of ${param.values.join(', ')}`);
      }
      return raw;
    case 'user_id':
      if (raw === undefined) return undefined;
      if (!USER_ID_TEXT.test(raw)) {
        throw errors.INVALID_ARGUMENT(
          `${name}: a user id (an account id in decimal, 1-15 digits): ${raw.slice(0, 20)}`,
        );
      }
      return raw;
  }
}

/** A query-string integer: decimal digits only (no `0x10`, `1e3`, `""` or spaces). */
function clampInt(raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) {
    throw errors.INVALID_ARGUMENT(`not a decimal integer: ${raw.slice(0, 20)}`);
  }
  return Math.min(max, Math.max(min, Number(raw)));
}
