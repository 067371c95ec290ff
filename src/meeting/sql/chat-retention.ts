/**
 * {@link ChatRetentionStore} on SQL: picks up to `limit` chat keys of meetings ended in the
 * window (meeting_rooms_ended index, then the chats' primary key), then deletes exactly
 * those rows by primary key in one statement. Two steps because MySQL allows neither LIMIT
 * in an IN subquery nor reading the table a DELETE changes; SQLite has no DELETE … LIMIT.
 */
import type { Kysely } from 'kysely';
import type { ChatRetentionStore } from '../wiring/chat-retention.js';
import type { Database } from '../../adapters/sql/schema.js';

export function sqlChatRetentionStore(db: Kysely<Database>): ChatRetentionStore {
  return {
    async deleteEndedChats({ endedFromMs, endedBeforeMs, limit }) {
      if (limit <= 0 || endedBeforeMs <= endedFromMs) return { found: 0, deleted: 0 };
      const picked = await db
        .selectFrom('meeting_rooms as r')
        .innerJoin('meeting_chats as c', (join) =>
          join.onRef('c.app_code', '=', 'r.app_code').onRef('c.room_code', '=', 'r.room_code'),
        )
        .select(['c.app_code', 'c.room_code', 'c.message_id'])
        .where('r.status', '=', 2)
        .where('r.ended_at_ms', '>=', endedFromMs)
        .where('r.ended_at_ms', '<', endedBeforeMs)
        .limit(limit)
        .execute();
      if (picked.length === 0) return { found: 0, deleted: 0 };
      const rooms = new Map<string, { app: string; room: string; ids: number[] }>();
      for (const row of picked) {
        const key = `${row.app_code}\n${row.room_code}`;
        const entry = rooms.get(key) ?? { app: row.app_code, room: row.room_code, ids: [] };
        entry.ids.push(Number(row.message_id));
        rooms.set(key, entry);
      }
      const result = await db
        .deleteFrom('meeting_chats')
        .where((eb) =>
          eb.or(
            [...rooms.values()].map(({ app, room, ids }) =>
              eb.and([
                eb('app_code', '=', app),
                eb('room_code', '=', room),
                eb('message_id', 'in', ids),
              ]),
            ),
          ),
        )
        .executeTakeFirst();
      return { found: picked.length, deleted: Number(result.numDeletedRows) };
    },
  };
}
