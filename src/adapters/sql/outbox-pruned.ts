/**
 * `room_outbox_pruned`: how far outbox retention has deleted into each room (the highest
 * `room_version` of a deleted row). Retention deletes by age and status, not oldest first
 * (a dead letter outlives the delivered rows around it), so a kept row says nothing about
 * the rows after it; the replay (./room-frame-log.ts) trusts only what lies above this mark.
 */
import { sql, type Kysely } from 'kysely';
import type { CellKey } from '../../cell/lease.js';
import type { SqlFlavor } from './flavor.js';
import type { Database } from './schema.js';

export interface PrunedRow {
  readonly app_code: string;
  readonly room_id: string;
  readonly room_version: number | string;
}

/**
 * Raises each room's mark to the highest version among `rows`. Called BEFORE the rows are
 * deleted: a replay that read the rows and then the mark sees every deletion that could
 * have cost it a row (a mark raised for a row that was kept after all only refetches).
 */
export async function markPruned(
  db: Kysely<Database>,
  flavor: SqlFlavor,
  rows: readonly PrunedRow[],
): Promise<void> {
  const marks = new Map<string, { app_code: string; room_id: string; max_version: number }>();
  for (const r of rows) {
    const id = `${r.app_code}\u0000${r.room_id}`;
    const version = Number(r.room_version);
    const seen = marks.get(id);
    if (!seen || seen.max_version < version) {
      marks.set(id, { app_code: r.app_code, room_id: r.room_id, max_version: version });
    }
  }
  if (marks.size === 0) return;
  // In key order, so sweeps on several nodes take the row locks in the same order.
  const values = [...marks.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
  const insert = db.insertInto('room_outbox_pruned').values(values);
  await (
    flavor === 'mysql'
      ? insert.onDuplicateKeyUpdate({
          max_version: sql`GREATEST(max_version, VALUES(max_version))`,
        })
      : insert.onConflict((oc) =>
          oc.columns(['app_code', 'room_id']).doUpdateSet({
            max_version: sql`MAX(max_version, excluded.max_version)`,
          }),
        )
  ).execute();
}

/** The room's mark: no kept row at or below it proves the rows after it complete. */
export async function prunedUpTo(db: Kysely<Database>, key: CellKey): Promise<number | null> {
  const row = await db
    .selectFrom('room_outbox_pruned')
    .select('max_version')
    .where('app_code', '=', key.appCode)
    .where('room_id', '=', key.roomId)
    .executeTakeFirst();
  return row ? Number(row.max_version) : null;
}
