import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType } from '../flavor.js';

/**
 * A voice room's public chat history (`voice_room_messages`, written with the commit of
 * each message, marked when deleted, dropped by age) and its gift rankings
 * (`voice_room_rankings`: per room, board and user, the all-time total and the total of the
 * current day, added to in each gift's transaction; a gift on a new day starts the day's
 * total again).
 */
export function voiceChatRankings(flavor: SqlFlavor) {
  const app = idType(flavor, 64);
  const room = idType(flavor, 128);
  const user = idType(flavor, 64);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('voice_room_messages')
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('room_id', room, (c) => c.notNull())
        .addColumn('message_id', bigint(flavor), (c) => c.notNull())
        .addColumn('user_id', user, (c) => c.notNull())
        .addColumn('user_name', 'varchar(200)', (c) => c.notNull())
        .addColumn('content', 'varchar(2000)', (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('deleted_at_ms', bigint(flavor))
        .addPrimaryKeyConstraint('voice_room_messages_pk', ['app_code', 'room_id', 'message_id'])
        .execute();
      // The retention sweep's order.
      await db.schema
        .createIndex('voice_room_messages_created')
        .on('voice_room_messages')
        .columns(['created_at_ms'])
        .execute();
      // No index but the key: every gift writes its rows, a top N is read at most a few
      // times a second (the frame) and sorts one room's board, so the writes are spared.
      await db.schema
        .createTable('voice_room_rankings')
        .addColumn('app_code', app, (c) => c.notNull())
        .addColumn('room_id', room, (c) => c.notNull())
        .addColumn('board', idType(flavor, 16), (c) => c.notNull())
        .addColumn('user_id', user, (c) => c.notNull())
        .addColumn('total', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('day', idType(flavor, 10), (c) => c.notNull())
        .addColumn('day_total', bigint(flavor), (c) => c.notNull())
        .addColumn('day_updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('voice_room_rankings_pk', [
          'app_code',
          'room_id',
          'board',
          'user_id',
        ])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('voice_room_rankings').execute();
      await db.schema.dropTable('voice_room_messages').execute();
    },
  };
}
