/**
 * The admin API's read of a room's command log (the primary key `(app_code, room_id,
 * version)` serves each page) and of its cell row. Reads only; the lease token is never
 * selected.
 */
import type { Kysely } from 'kysely';
import type { CommandLogReader, CommandLogRow } from '../../edge/http/admin-inspection-routes.js';
import type { Database } from './schema.js';

export function sqlCommandLogReader(db: Kysely<Database>): CommandLogReader {
  return {
    async room(appCode, roomId) {
      const row = await db
        .selectFrom('room_cells')
        .select(['kind', 'version', 'lease_epoch', 'owner_node_id'])
        .where('app_code', '=', appCode)
        .where('room_id', '=', roomId)
        .executeTakeFirst();
      return row
        ? {
            kind: row.kind,
            version: Number(row.version),
            leaseEpoch: Number(row.lease_epoch),
            ownerNodeId: row.owner_node_id,
          }
        : null;
    },
    async read(appCode, roomId, afterVersion, limit): Promise<CommandLogRow[]> {
      const rows = await db
        .selectFrom('room_command_log')
        .select([
          'version',
          'request_id',
          'command_type',
          'payload',
          'events',
          'result',
          'owner_node_id',
          'lease_epoch',
          'created_at_ms',
        ])
        .where('app_code', '=', appCode)
        .where('room_id', '=', roomId)
        .where('version', '>', afterVersion)
        .orderBy('version')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        version: Number(r.version),
        requestId: r.request_id,
        commandType: r.command_type,
        payload: r.payload,
        events: r.events,
        result: r.result,
        ownerNodeId: r.owner_node_id,
        leaseEpoch: Number(r.lease_epoch),
        createdAtMs: Number(r.created_at_ms),
      }));
    },
  };
}
