/**
 * What the outbox's admin routes answer (./admin-routes.ts): each is checked against its
 * schema before it is sent, and the OpenAPI document shows it as a named schema.
 */
import { z } from 'zod';

export const Webhook = z
  .strictObject({
    app_code: z.string(),
    url: z.string(),
    crowd_events: z.boolean().describe('Whether it takes a voice room’s crowd joins and leaves'),
    updated_at_ms: z.int(),
  })
  .meta({ title: 'Webhook' });

export const WebhookDeleted = z
  .strictObject({ deleted: z.boolean().describe('Whether there was one') })
  .meta({ title: 'WebhookDeleted' });

const OutboxEvent = z.strictObject({
  id: z.int(),
  event_id: z.string(),
  app_code: z.string(),
  room_id: z.string(),
  room_version: z.int(),
  type: z.string(),
  status: z.enum(['pending', 'delivering', 'delivered', 'retryable', 'failed', 'skipped']),
  attempts: z.int(),
  worker_id: z.string().nullable(),
  lock_until_ms: z.int().nullable(),
  next_attempt_at_ms: z.int(),
  last_error: z.string().nullable(),
  created_at_ms: z.int(),
  updated_at_ms: z.int(),
  envelope: z.unknown().describe('The event as delivered (docs/webhooks.md)'),
});

export const OutboxPage = z
  .strictObject({ events: z.array(OutboxEvent).readonly(), next_after_id: z.int().nullable() })
  .meta({ title: 'OutboxPage' });

export const Requeued = z.strictObject({ requeued: z.int() }).meta({ title: 'Requeued' });

export const MarkedFailed = z
  .strictObject({ failed: z.literal(true) })
  .meta({ title: 'MarkedFailed' });
