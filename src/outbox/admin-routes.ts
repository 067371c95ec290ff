/**
 * Operator API of the outbox, under `/api/v1/admin`, behind the same `X-Admin-Token`
 * (ROOMS_ADMIN_TOKEN) as the other admin routes; without a configured token every call is
 * refused:
 *
 * - `GET|PUT|DELETE /apps/:app_code/webhook`: the app's webhook (the secret is write-only;
 *   the URL must be http(s) with a host, and an IP literal the destination policy refuses
 *   is refused here already: names are checked when they are resolved, at delivery);
 * - `GET /outbox?status=failed&app_code=&after_id=&limit=`: events, oldest first;
 * - `POST /outbox/requeue {event_ids? | app_code?, status?}`: failed (or skipped) →
 *   pending, attempts reset;
 * - `POST /outbox/events/:event_id/fail {reason?}`: give up on a pending/retryable event.
 *
 * Answers use the REST envelope; errors go through the envelope's error mapping.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendOk } from '../shared/http-envelope.js';
import { declaredReply } from '../edge/declared-reply.js';
import * as or from './replies.js';
import type { Clock } from '../shared/clock.js';
import { DestinationPolicy } from './destinations.js';
import type { OutboxRecord, OutboxStore } from './outbox-store.js';
import type { WebhookConfig, WebhookDirectory } from './webhooks.js';
import { errors } from '../shared/error-codes.js';
import { parseInput } from '../shared/parse-input.js';
import { requireAdminToken } from '../edge/http/admin-token.js';
import { documented, jsonSchemaOf, replySchemaOf } from '../edge/http/openapi.js';

export interface OutboxAdminDeps {
  readonly store: OutboxStore;
  readonly webhooks: WebhookDirectory;
  readonly clock: Clock;
  /** Null: every call is refused. */
  readonly adminToken: string | null;
  /** The webhook sink's policy (default: only globally routable addresses). */
  readonly destinations?: DestinationPolicy;
}

const appCode = z.string().regex(/^[a-z0-9_-]{1,64}$/, 'lower-case letters, digits, _ or - (1-64)');
const appParams = z.object({ app_code: appCode });
const webhookBody = z.object({
  url: z
    .string()
    .max(2048)
    .refine(
      (v) => /^https?:\/\/[^\s]+$/i.test(v) && URL.canParse(v) && new URL(v).hostname !== '',
      'an http(s) URL with a host',
    ),
  secret: z.string().min(16, 'at least 16 characters').max(256),
  crowd_events: z
    .boolean()
    .optional()
    .describe(
      'Whether it takes a voice room’s crowd joins and leaves (events with in_crowd: true); ' +
        'false: they are settled skipped, unsent. Default true',
    ),
});
/** A query-string integer: decimal digits only (no `0x10`, `1e3`, `""` or spaces). */
const decimal = () =>
  z
    .string()
    .regex(/^\d{1,15}$/, 'decimal digits only')
    .transform(Number);
const listQuery = z.object({
  status: z
    .enum(['pending', 'delivering', 'delivered', 'retryable', 'failed', 'skipped'])
    .default('failed'),
  app_code: appCode.optional(),
  after_id: decimal().optional(),
  limit: decimal().pipe(z.number().min(1).max(500)).default(50),
});
const requeueBody = z
  .object({
    event_ids: z.array(z.string().min(1).max(64)).min(1).max(500).optional(),
    app_code: appCode.optional(),
    status: z.enum(['failed', 'skipped']).default('failed'),
  })
  .refine((b) => b.event_ids !== undefined || b.app_code !== undefined, {
    message: 'event_ids or app_code is required',
  });
const eventParams = z.object({ event_id: z.string().min(1).max(64) });
const failBody = z.object({ reason: z.string().min(1).max(500).optional() }).default({});

const outboxDoc = (doc: Omit<Parameters<typeof documented>[0], 'tag' | 'access'>) =>
  documented({ tag: 'outbox', access: 'admin', ...doc });
const docs = {
  getWebhook: outboxDoc({
    operationId: 'getWebhook',
    summary: "The app's webhook (the secret is never shown)",
    params: jsonSchemaOf(appParams),
    data: replySchemaOf(or.Webhook),
    refusals: [errors.WEBHOOK_NOT_FOUND],
    responses: { 200: 'The webhook', 404: 'The app has no webhook' },
  }),
  putWebhook: outboxDoc({
    operationId: 'putWebhook',
    summary: "Set the app's webhook URL and signing secret",
    params: jsonSchemaOf(appParams),
    body: jsonSchemaOf(webhookBody),
    data: replySchemaOf(or.Webhook),
    responses: { 200: 'The webhook' },
  }),
  deleteWebhook: outboxDoc({
    operationId: 'deleteWebhook',
    summary: "Remove the app's webhook",
    params: jsonSchemaOf(appParams),
    data: replySchemaOf(or.WebhookDeleted),
    responses: { 200: '`deleted`: whether there was one' },
  }),
  list: outboxDoc({
    operationId: 'listOutboxEvents',
    summary: 'Outbox events, oldest first (default: the failed ones)',
    query: jsonSchemaOf(listQuery),
    data: replySchemaOf(or.OutboxPage),
    responses: { 200: '`events`, and `next_after_id` when there may be more' },
  }),
  requeue: outboxDoc({
    operationId: 'requeueOutboxEvents',
    summary: 'Deliver failed (or skipped) events again, attempts reset',
    description: 'Give `event_ids` or `app_code` (or both).',
    body: jsonSchemaOf(requeueBody),
    data: replySchemaOf(or.Requeued),
    responses: { 200: '`requeued`: how many' },
  }),
  fail: outboxDoc({
    operationId: 'failOutboxEvent',
    summary: 'Give up on a pending or retryable event',
    params: jsonSchemaOf(eventParams),
    body: jsonSchemaOf(failBody),
    data: replySchemaOf(or.MarkedFailed),
    refusals: [errors.NOT_PENDING],
    responses: {
      200: '`failed`: true',
      400: 'Invalid input, or no such event pending or retryable',
    },
  }),
};

/** A webhook as the admin API shows it (never its secret). */
function webhookAnswer(app_code: string, hook: WebhookConfig) {
  return {
    app_code,
    url: hook.url,
    crowd_events: hook.crowdEvents,
    updated_at_ms: hook.updatedAtMs,
  };
}

export function registerOutboxAdminRoutes(app: FastifyInstance, deps: OutboxAdminDeps): void {
  const { store, webhooks, clock } = deps;
  const destinations = deps.destinations ?? new DestinationPolicy();

  void app.register(
    (scope, _options, done) => {
      scope.addHook('onRequest', requireAdminToken(deps.adminToken));

      scope.get('/apps/:app_code/webhook', docs.getWebhook, async (request, reply) => {
        const { app_code } = parse(appParams, request.params);
        const hook = await webhooks.get(app_code);
        if (!hook) throw errors.WEBHOOK_NOT_FOUND();
        const answer = webhookAnswer(app_code, hook);
        return sendOk(request, reply, declaredReply(or.Webhook, 'getWebhook', answer));
      });

      scope.put('/apps/:app_code/webhook', docs.putWebhook, async (request, reply) => {
        const { app_code } = parse(appParams, request.params);
        const body = parse(webhookBody, request.body);
        const refused = destinations.refuseLiteral(new URL(body.url));
        if (refused) throw errors.BAD_REQUEST(`url: ${refused}`);
        const setting = { url: body.url, secret: body.secret, crowdEvents: body.crowd_events };
        const hook = await webhooks.put(app_code, setting, clock.nowMs());
        const answer = webhookAnswer(app_code, hook);
        return sendOk(request, reply, declaredReply(or.Webhook, 'putWebhook', answer));
      });

      scope.delete('/apps/:app_code/webhook', docs.deleteWebhook, async (request, reply) => {
        const { app_code } = parse(appParams, request.params);
        const deleted = await webhooks.delete(app_code);
        return sendOk(
          request,
          reply,
          declaredReply(or.WebhookDeleted, 'deleteWebhook', { deleted }),
        );
      });

      scope.get('/outbox', docs.list, async (request, reply) => {
        const q = parse(listQuery, request.query);
        const rows = await store.list({
          status: q.status,
          limit: q.limit,
          ...(q.app_code ? { appCode: q.app_code } : {}),
          ...(q.after_id !== undefined ? { afterId: q.after_id } : {}),
        });
        return sendOk(
          request,
          reply,
          declaredReply(or.OutboxPage, 'listOutboxEvents', {
            events: rows.map(render),
            next_after_id: rows.length === q.limit ? rows[rows.length - 1]!.id : null,
          }),
        );
      });

      scope.post('/outbox/requeue', docs.requeue, async (request, reply) => {
        const body = parse(requeueBody, request.body);
        const requeued = await store.requeue(
          {
            status: body.status,
            ...(body.event_ids ? { eventIds: body.event_ids } : {}),
            ...(body.app_code ? { appCode: body.app_code } : {}),
          },
          clock.nowMs(),
        );
        return sendOk(
          request,
          reply,
          declaredReply(or.Requeued, 'requeueOutboxEvents', { requeued }),
        );
      });

      scope.post('/outbox/events/:event_id/fail', docs.fail, async (request, reply) => {
        const { event_id } = parse(eventParams, request.params);
        const { reason } = parse(failBody, request.body ?? {});
        const failed = await store.markFailed(
          event_id,
          reason ?? 'marked failed by an operator',
          clock.nowMs(),
        );
        if (!failed) {
          throw errors.NOT_PENDING();
        }
        return sendOk(
          request,
          reply,
          declaredReply(or.MarkedFailed, 'failOutboxEvent', { failed }),
        );
      });
      done();
    },
    { prefix: '/api/v1/admin' },
  );
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  return parseInput(schema, value, errors.BAD_REQUEST);
}

function render(r: OutboxRecord): Record<string, unknown> {
  return {
    id: r.id,
    event_id: r.eventId,
    app_code: r.appCode,
    room_id: r.roomId,
    room_version: r.roomVersion,
    type: r.eventType,
    status: r.status,
    attempts: r.attempts,
    worker_id: r.workerId,
    lock_until_ms: r.lockUntilMs,
    next_attempt_at_ms: r.nextAttemptAtMs,
    last_error: r.lastError,
    created_at_ms: r.createdAtMs,
    updated_at_ms: r.updatedAtMs,
    envelope: JSON.parse(r.envelope) as unknown,
  };
}
