/** A voice room's chat history on SQL: its pages, one message's sender, the retention. */
import type { Kysely } from 'kysely';
import type { Database } from '../../adapters/sql/schema.js';
import type { RoomMessageRow } from '../api/voice-store.js';

export async function listRoomMessages(
  db: Kysely<Database>,
  appCode: string,
  roomId: string,
  query: { readonly beforeId?: number | undefined; readonly limit: number },
): Promise<{ list: RoomMessageRow[]; has_more: boolean }> {
  const rows = await db
    .selectFrom('voice_room_messages')
    .select(['message_id', 'user_id', 'user_name', 'content', 'created_at_ms'])
    .where('app_code', '=', appCode)
    .where('room_id', '=', roomId)
    .where('deleted_at_ms', 'is', null)
    .$if(query.beforeId !== undefined, (q) => q.where('message_id', '<', query.beforeId!))
    .orderBy('message_id', 'desc')
    .limit(query.limit + 1)
    .execute();
  return {
    list: rows.slice(0, query.limit).map((r) => ({
      message_id: Number(r.message_id),
      user_id: r.user_id,
      user_name: r.user_name,
      content: r.content,
      at_ms: Number(r.created_at_ms),
    })),
    has_more: rows.length > query.limit,
  };
}

export async function roomMessage(
  db: Kysely<Database>,
  appCode: string,
  roomId: string,
  messageId: number,
): Promise<{ user_id: string; deleted: boolean } | null> {
  const row = await db
    .selectFrom('voice_room_messages')
    .select(['user_id', 'deleted_at_ms'])
    .where('app_code', '=', appCode)
    .where('room_id', '=', roomId)
    .where('message_id', '=', messageId)
    .executeTakeFirst();
  return row ? { user_id: row.user_id, deleted: row.deleted_at_ms !== null } : null;
}

/**
 * Deletes up to `limit` messages sent before `beforeMs` (the index on `created_at_ms`, then
 * by primary key: MySQL allows no LIMIT in an IN subquery, SQLite no DELETE … LIMIT).
 * `found`: the rows picked; fewer than `limit` means none older are left.
 */
export async function deleteOldMessages(
  db: Kysely<Database>,
  beforeMs: number,
  limit: number,
): Promise<{ found: number; deleted: number }> {
  const picked = await db
    .selectFrom('voice_room_messages')
    .select(['app_code', 'room_id', 'message_id'])
    .where('created_at_ms', '<', beforeMs)
    .orderBy('created_at_ms')
    .limit(limit)
    .execute();
  if (picked.length === 0) return { found: 0, deleted: 0 };
  const result = await db
    .deleteFrom('voice_room_messages')
    .where((eb) =>
      eb.or(
        picked.map((row) =>
          eb.and([
            eb('app_code', '=', row.app_code),
            eb('room_id', '=', row.room_id),
            eb('message_id', '=', row.message_id),
          ]),
        ),
      ),
    )
    .executeTakeFirst();
  return { found: picked.length, deleted: Number(result.numDeletedRows) };
}
