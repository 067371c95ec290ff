import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType, jsonText } from '../flavor.js';

/** The cell runtime's tables: cell rows (version + fence), command log, outbox. */
export function roomCellRuntime(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('room_cells')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('kind', idType(flavor, 32), (c) => c.notNull())
        .addColumn('version', bigint(flavor), (c) => c.notNull().defaultTo(0))
        .addColumn('lease_epoch', bigint(flavor), (c) => c.notNull().defaultTo(0))
        .addColumn('owner_node_id', idType(flavor, 128))
        .addColumn('snapshot', jsonText(flavor))
        .addColumn('snapshot_version', bigint(flavor), (c) => c.notNull().defaultTo(0))
        .addColumn('next_alarm_ms', bigint(flavor))
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('room_cells_pk', ['app_code', 'room_id'])
        .execute();
      await db.schema
        .createIndex('room_cells_next_alarm')
        .on('room_cells')
        .column('next_alarm_ms')
        .execute();

      await db.schema
        .createTable('room_command_log')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('version', bigint(flavor), (c) => c.notNull())
        .addColumn('request_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('command_type', idType(flavor, 64), (c) => c.notNull())
        .addColumn('payload', jsonText(flavor), (c) => c.notNull())
        .addColumn('events', jsonText(flavor), (c) => c.notNull())
        .addColumn('result', jsonText(flavor), (c) => c.notNull())
        .addColumn('owner_node_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('lease_token', idType(flavor, 64), (c) => c.notNull())
        .addColumn('lease_epoch', bigint(flavor), (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('room_command_log_pk', ['app_code', 'room_id', 'version'])
        .addUniqueConstraint('room_command_log_request', ['app_code', 'room_id', 'request_id'])
        .execute();

      await db.schema
        .createTable('room_outbox')
        // SQLite only auto-increments a column typed exactly `integer`, which bigint() gives it.
        .addColumn('id', bigint(flavor), (c) => c.primaryKey().autoIncrement())
        .addColumn('event_id', idType(flavor, 64), (c) => c.notNull().unique())
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('room_version', bigint(flavor), (c) => c.notNull())
        .addColumn('event_type', idType(flavor, 64), (c) => c.notNull())
        .addColumn('envelope', jsonText(flavor), (c) => c.notNull())
        .addColumn('status', idType(flavor, 16), (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('worker_id', idType(flavor, 128))
        .addColumn('lock_until_ms', bigint(flavor))
        .addColumn('next_attempt_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('room_outbox_claim')
        .on('room_outbox')
        .columns(['status', 'next_attempt_at_ms'])
        .execute();
      await db.schema
        .createIndex('room_outbox_room_order')
        .on('room_outbox')
        .columns(['app_code', 'room_id', 'room_version'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('room_outbox').execute();
      await db.schema.dropTable('room_command_log').execute();
      await db.schema.dropTable('room_cells').execute();
    },
  };
}
