import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType } from '../flavor.js';

/**
 * How far outbox retention has deleted into each room: the highest `room_version` of any of
 * the room's outbox rows it deleted. Retention does not delete oldest first (dead letters
 * outlive delivered rows), so a kept row proves nothing about the rows after it; a replay
 * (`room.subscribe {since_…}`) is served only from an anchor above this mark, where no row
 * can be missing. Written before the rows are deleted.
 */
export function roomOutboxPruned(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('room_outbox_pruned')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('max_version', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('room_outbox_pruned_pk', ['app_code', 'room_id'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('room_outbox_pruned').execute();
    },
  };
}
