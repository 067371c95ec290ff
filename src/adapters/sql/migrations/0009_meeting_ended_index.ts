import type { Kysely } from 'kysely';

/**
 * An index for the chat retention's "meetings ended before T" (status 2, by end time):
 * without it every sweep reads every meeting row.
 */
export function meetingEndedIndex() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('meeting_rooms_ended')
        .on('meeting_rooms')
        .columns(['status', 'ended_at_ms'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('meeting_rooms_ended').on('meeting_rooms').execute();
    },
  };
}
