import type { Kysely } from 'kysely';

/**
 * An index for the notification retention's "created before T": without it every sweep
 * reads every notification row. The primary key rides along in the index on both backends,
 * so the sweep picks the ids to delete from the index alone.
 */
export function notificationCreatedIndex() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('notifications_created')
        .on('notifications')
        .columns(['created_at_ms'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('notifications_created').on('notifications').execute();
    },
  };
}
