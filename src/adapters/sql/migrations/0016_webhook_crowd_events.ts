import type { Kysely } from 'kysely';

/**
 * Whether an app's webhook takes the joins and leaves of a voice room's crowd (events with
 * `in_crowd: true`, src/voice-room/domain/crowd.ts): 1 (the default, as before) or 0 (they
 * are settled `skipped` unsent).
 */
export function webhookCrowdEvents() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('app_webhooks')
        .addColumn('crowd_events', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('app_webhooks').dropColumn('crowd_events').execute();
    },
  };
}
