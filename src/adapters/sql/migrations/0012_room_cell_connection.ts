import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint } from '../flavor.js';

/**
 * The MySQL connection (`CONNECTION_ID()`) of the transaction that last wrote a cell row:
 * every activation and every fence writes it, so a new owner whose activation finds the row
 * locked by an owner that stopped before its COMMIT can read, uncommitted, whose session
 * holds the lock and end it. Null on SQLite (one process, no such session).
 */
export function roomCellConnection(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('room_cells').addColumn('owner_conn_id', bigint(flavor)).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('room_cells').dropColumn('owner_conn_id').execute();
    },
  };
}
