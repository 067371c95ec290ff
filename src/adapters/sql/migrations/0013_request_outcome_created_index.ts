import type { Kysely } from 'kysely';

/**
 * An index for the request ids' retry window ("recorded before T", src/cell/log-retention.ts):
 * without it every sweep reads every outcome. The primary key rides along in the index on
 * both backends, so the sweep picks the keys to delete from the index alone.
 */
export function requestOutcomeCreatedIndex() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('room_request_outcomes_created')
        .on('room_request_outcomes')
        .columns(['created_at_ms'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .dropIndex('room_request_outcomes_created')
        .on('room_request_outcomes')
        .execute();
    },
  };
}
