import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType } from '../flavor.js';

/**
 * Meetings: the projections of the meeting cells (`meeting_rooms`, `meeting_participants`,
 * `meeting_chats`), the single-meeting index `meeting_active_members` (invariant 6: its
 * primary key (app_code, user_id) is what refuses a second active meeting), and the two id
 * allocators the edge uses before a command (`meeting_codes` gives a meeting its numeric id
 * and room code, once per create request; `meeting_participant_ids` gives a (meeting, user)
 * its participant row id), so that every retry reuses the same ids.
 */
export function meetingTables(flavor: SqlFlavor) {
  const app = idType(flavor, 64);
  const code = idType(flavor, 16);
  const user = idType(flavor, 64);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('meeting_codes')
        .addColumn('id', bigint(flavor), (c) => c.primaryKey().autoIncrement())
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('room_code', code, (c) => c.notNull())
        // The create request (caller-scoped) the code was drawn for: its retries get it again.
        .addColumn('request_key', idType(flavor, 200), (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addUniqueConstraint('meeting_codes_code', ['app_code', 'room_code'])
        .addUniqueConstraint('meeting_codes_request', ['app_code', 'request_key'])
        .execute();
      await db.schema
        .createTable('meeting_participant_ids')
        .addColumn('id', bigint(flavor), (c) => c.primaryKey().autoIncrement())
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('room_code', code, (c) => c.notNull())
        .addColumn('user_id', user, (c) => c.notNull())
        .addUniqueConstraint('meeting_participant_ids_user', ['app_code', 'room_code', 'user_id'])
        .execute();
      await db.schema
        .createTable('meeting_rooms')
        .addColumn('id', bigint(flavor), (c) => c.primaryKey())
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('room_code', code, (c) => c.notNull())
        .addColumn('title', 'varchar(800)', (c) => c.notNull())
        .addColumn('host_id', user, (c) => c.notNull())
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('has_password', 'integer', (c) => c.notNull())
        .addColumn('max_members', 'integer', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('ended_reason', 'varchar(32)')
        .addColumn('started_at_ms', bigint(flavor))
        .addColumn('ended_at_ms', bigint(flavor))
        .addColumn('settings', 'varchar(1000)', (c) => c.notNull())
        .addColumn('online_count', 'integer', (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addUniqueConstraint('meeting_rooms_code', ['app_code', 'room_code'])
        .execute();
      await db.schema
        .createTable('meeting_participants')
        .addColumn('id', bigint(flavor), (c) => c.primaryKey())
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('room_code', code, (c) => c.notNull())
        .addColumn('user_id', user, (c) => c.notNull())
        .addColumn('role', 'integer', (c) => c.notNull())
        .addColumn('joined_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('left_at_ms', bigint(flavor))
        .addColumn('left_reason', 'varchar(32)')
        .addColumn('duration', bigint(flavor), (c) => c.notNull())
        .addUniqueConstraint('meeting_participants_user', ['app_code', 'room_code', 'user_id'])
        .execute();
      // "My meetings": every meeting a user hosted or joined, newest first.
      await db.schema
        .createIndex('meeting_participants_mine')
        .on('meeting_participants')
        .columns(['app_code', 'user_id', 'room_code'])
        .execute();
      await db.schema
        .createTable('meeting_chats')
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('room_code', code, (c) => c.notNull())
        .addColumn('message_id', bigint(flavor), (c) => c.notNull())
        .addColumn('user_id', user, (c) => c.notNull())
        .addColumn('content', 'varchar(2000)', (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('meeting_chats_pk', ['app_code', 'room_code', 'message_id'])
        .execute();
      await db.schema
        .createTable('meeting_active_members')
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('user_id', user, (c) => c.notNull())
        .addColumn('room_code', code, (c) => c.notNull())
        .addPrimaryKeyConstraint('meeting_active_members_pk', ['app_code', 'user_id'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const t of [
        'meeting_active_members',
        'meeting_chats',
        'meeting_participants',
        'meeting_rooms',
        'meeting_participant_ids',
        'meeting_codes',
      ]) {
        await db.schema.dropTable(t).execute();
      }
    },
  };
}
