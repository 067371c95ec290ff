import { sql, type Kysely } from 'kysely';
import { type SqlFlavor, idType, jsonText } from '../flavor.js';

/**
 * A room's snapshot in a row of its own. In `room_cells` it was part of the row every
 * commit updates, and SQLite rewrites a whole row on update: a voice room of 10,000 present
 * members (1.6 MB of state) wrote its snapshot again with every command. `room_cells` keeps
 * `snapshot_version` (fenced with the row, read by log retention); this table holds the
 * state at that version, written in the same transaction.
 */
export function roomSnapshots(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('room_snapshots')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('snapshot', jsonText(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('room_snapshots_pk', ['app_code', 'room_id'])
        .execute();
      await sql`INSERT INTO room_snapshots (app_code, room_id, snapshot)
        SELECT app_code, room_id, snapshot FROM room_cells WHERE snapshot IS NOT NULL`.execute(db);
      await db.schema.alterTable('room_cells').dropColumn('snapshot').execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('room_cells').addColumn('snapshot', jsonText(flavor)).execute();
      await sql`UPDATE room_cells SET snapshot = (SELECT s.snapshot FROM room_snapshots s
        WHERE s.app_code = room_cells.app_code AND s.room_id = room_cells.room_id)`.execute(db);
      await db.schema.dropTable('room_snapshots').execute();
    },
  };
}
