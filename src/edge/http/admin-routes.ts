/**
 * The operator's API (X-Admin-Token from ROOMS_ADMIN_TOKEN): wallet top-ups and the gift
 * catalog of each app. Without a configured token every call is refused.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../shared/clock.js';
import { sendOk } from '../../shared/http-envelope.js';
import { errors } from '../../shared/error-codes.js';
import { declaredReply } from '../declared-reply.js';
import * as ar from './admin-replies.js';
import { parseInput } from '../../shared/parse-input.js';
import type { VoiceRoomStore } from '../../voice-room/api/voice-store.js';
import { requireAdminToken } from './admin-token.js';
import { JsonUserId, userIdText } from '../../shared/user-id.js';
import { documented, jsonSchemaOf, replySchemaOf } from './openapi.js';

const appCode = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/)
  .default('default');
const giftId = z.string().regex(/^[A-Za-z0-9_.:@-]{1,64}$/);
const topUpBody = z.object({
  app_code: appCode,
  user_id: JsonUserId,
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  request_id: z.string().regex(/^[\x21-\x7e]{1,128}$/),
});
const giftBody = z.object({
  app_code: appCode,
  name: z.string().min(1).max(100),
  price: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  active: z.boolean().default(true),
});

const giftsQuery = z.object({ app_code: appCode });
const giftParams = z.object({ gift_id: giftId });

const docs = {
  topUp: documented({
    operationId: 'topUpWallet',
    tag: 'admin',
    summary: "Top up a user's wallet (once per request_id)",
    access: 'admin',
    body: jsonSchemaOf(topUpBody),
    data: replySchemaOf(ar.TopUpReply),
    refusals: [errors.BALANCE_LIMIT],
    responses: { 200: 'The balance after the top-up, and whether it was a retry' },
  }),
  listGifts: documented({
    operationId: 'adminListGifts',
    tag: 'admin',
    summary: "The app's gift catalog",
    access: 'admin',
    query: jsonSchemaOf(giftsQuery),
    data: replySchemaOf(ar.CatalogGifts),
    responses: { 200: '`list`: the gifts' },
  }),
  putGift: documented({
    operationId: 'putGift',
    tag: 'admin',
    summary: 'Create or replace a gift of the catalog',
    access: 'admin',
    params: jsonSchemaOf(giftParams),
    body: jsonSchemaOf(giftBody),
    data: replySchemaOf(ar.CatalogGift),
    responses: { 200: 'The gift' },
  }),
};

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  return parseInput(schema, value ?? {});
}

export function registerAdminRoutes(
  app: FastifyInstance,
  deps: { store: VoiceRoomStore; adminToken: string | null; clock: Clock },
): void {
  const { store, clock } = deps;
  const opts = { onRequest: requireAdminToken(deps.adminToken) };

  app.post('/api/v1/admin/wallets/topup', { ...opts, ...docs.topUp }, async (request, reply) => {
    const b = parse(topUpBody, request.body);
    const result = await store.topUp(
      b.app_code,
      userIdText(b.user_id),
      b.amount,
      b.request_id,
      clock.nowMs(),
    );
    const answer = { user_id: b.user_id, ...result };
    return sendOk(request, reply, declaredReply(ar.TopUpReply, 'topUpWallet', answer));
  });

  app.get('/api/v1/admin/gifts', { ...opts, ...docs.listGifts }, async (request, reply) => {
    const q = parse(giftsQuery, request.query);
    const list = await store.listGifts(q.app_code);
    return sendOk(request, reply, declaredReply(ar.CatalogGifts, 'adminListGifts', { list }));
  });

  app.put('/api/v1/admin/gifts/:gift_id', { ...opts, ...docs.putGift }, async (request, reply) => {
    const id = parse(giftId, (request.params as { gift_id: string }).gift_id);
    const b = parse(giftBody, request.body);
    const gift = await store.putGift(
      b.app_code,
      { gift_id: id, name: b.name, price: b.price, active: b.active },
      clock.nowMs(),
    );
    return sendOk(request, reply, declaredReply(ar.CatalogGift, 'putGift', gift));
  });
}
