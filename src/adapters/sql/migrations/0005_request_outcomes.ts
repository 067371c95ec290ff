import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType, jsonText } from '../flavor.js';

/**
 * The first decided outcome of every request id, success or refusal, per room. Written in
 * the batch's commit transaction; its key is what turns a retry that a new owner would
 * decide differently into a unique violation, answered with the recorded outcome.
 */
export function requestOutcomeTables(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('room_request_outcomes')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('request_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('version', bigint(flavor), (c) => c.notNull())
        .addColumn('outcome', jsonText(flavor), (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('room_request_outcomes_pk', ['app_code', 'room_id', 'request_id'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('room_request_outcomes').execute();
    },
  };
}
