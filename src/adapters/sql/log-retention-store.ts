/**
 * {@link LogRetentionStore} on SQL. Each batch picks up to `limit` primary keys, then deletes
 * exactly those rows by key in one statement: MySQL allows neither LIMIT in an IN subquery
 * nor reading the table a DELETE changes, SQLite has no DELETE … LIMIT, and a delete by
 * whole keys locks only its rows, never a gap a cell's commit is about to insert into.
 */
import type { Kysely } from 'kysely';
import type { LogRetentionStore } from '../../cell/log-retention.js';
import type { Database } from './schema.js';

type RoomRows<K> = Map<string, { app: string; room: string; keys: K[] }>;

function byRoom<K>(
  rows: readonly { app_code: string; room_id: string }[],
  keyOf: (i: number) => K,
) {
  const rooms: RoomRows<K> = new Map();
  rows.forEach((row, i) => {
    const id = `${row.app_code}\n${row.room_id}`;
    const entry = rooms.get(id) ?? { app: row.app_code, room: row.room_id, keys: [] };
    entry.keys.push(keyOf(i));
    rooms.set(id, entry);
  });
  return [...rooms.values()];
}

export function sqlLogRetentionStore(db: Kysely<Database>): LogRetentionStore {
  return {
    async deleteCompactedLog({ writtenBeforeMs, limit }) {
      if (limit <= 0) return { found: 0, deleted: 0 };
      // From each room's row, the log's primary key range at or below its snapshot.
      const picked = await db
        .selectFrom('room_cells as c')
        .innerJoin('room_command_log as l', (join) =>
          join
            .onRef('l.app_code', '=', 'c.app_code')
            .onRef('l.room_id', '=', 'c.room_id')
            .onRef('l.version', '<=', 'c.snapshot_version'),
        )
        .select(['l.app_code', 'l.room_id', 'l.version'])
        .where('l.created_at_ms', '<', writtenBeforeMs)
        .limit(limit)
        .execute();
      if (picked.length === 0) return { found: 0, deleted: 0 };
      const rooms = byRoom(picked, (i) => Number(picked[i]!.version));
      const result = await db
        .deleteFrom('room_command_log')
        .where((eb) =>
          eb.or(
            rooms.map(({ app, room, keys }) =>
              eb.and([
                eb('app_code', '=', app),
                eb('room_id', '=', room),
                eb('version', 'in', keys),
              ]),
            ),
          ),
        )
        .executeTakeFirst();
      return { found: picked.length, deleted: Number(result.numDeletedRows) };
    },

    async deleteExpiredOutcomes({ recordedBeforeMs, limit }) {
      if (limit <= 0) return { found: 0, deleted: 0 };
      // Not while the log still holds the request: its unique key would refuse the id's
      // next use, and the command it names is still part of the room's history.
      const picked = await db
        .selectFrom('room_request_outcomes as o')
        .select(['o.app_code', 'o.room_id', 'o.request_id'])
        .where('o.created_at_ms', '<', recordedBeforeMs)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('room_command_log as l')
                .select('l.version')
                .whereRef('l.app_code', '=', 'o.app_code')
                .whereRef('l.room_id', '=', 'o.room_id')
                .whereRef('l.request_id', '=', 'o.request_id'),
            ),
          ),
        )
        .limit(limit)
        .execute();
      if (picked.length === 0) return { found: 0, deleted: 0 };
      const rooms = byRoom(picked, (i) => picked[i]!.request_id);
      const result = await db
        .deleteFrom('room_request_outcomes')
        .where((eb) =>
          eb.or(
            rooms.map(({ app, room, keys }) =>
              eb.and([
                eb('app_code', '=', app),
                eb('room_id', '=', room),
                eb('request_id', 'in', keys),
              ]),
            ),
          ),
        )
        .where('created_at_ms', '<', recordedBeforeMs)
        .executeTakeFirst();
      return { found: picked.length, deleted: Number(result.numDeletedRows) };
    },
  };
}
