import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType } from '../flavor.js';

/**
 * Voice rooms: the `rooms` and `room_list_entries` projections of the cells, and the
 * wallet (balances, a ledger unique per (app_code, request_id)) with the gift catalog.
 */
export function voiceRoomTables(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('rooms')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('owner_user_id', idType(flavor, 64), (c) => c.notNull())
        .addColumn('title', 'varchar(200)', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('seat_count', 'integer', (c) => c.notNull())
        .addColumn('room_version', bigint(flavor), (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('closed_at_ms', bigint(flavor))
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('rooms_pk', ['app_code', 'room_id'])
        .execute();
      await db.schema
        .createTable('room_list_entries')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('owner_user_id', idType(flavor, 64), (c) => c.notNull())
        .addColumn('title', 'varchar(200)', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('online_count', 'integer', (c) => c.notNull())
        .addColumn('mic_count', 'integer', (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('room_list_entries_pk', ['app_code', 'room_id'])
        .execute();
      await db.schema
        .createIndex('room_list_lobby')
        .on('room_list_entries')
        .columns(['app_code', 'status', 'online_count'])
        .execute();
      await db.schema
        .createTable('wallets')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('user_id', idType(flavor, 64), (c) => c.notNull())
        .addColumn('balance', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('wallets_pk', ['app_code', 'user_id'])
        .execute();
      await db.schema
        .createTable('wallet_ledger')
        .addColumn('id', bigint(flavor), (c) => c.primaryKey().autoIncrement())
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('request_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('user_id', idType(flavor, 64), (c) => c.notNull())
        .addColumn('amount', bigint(flavor), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128))
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addUniqueConstraint('wallet_ledger_request', ['app_code', 'request_id'])
        .execute();
      await db.schema
        .createTable('gift_catalog')
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('gift_id', idType(flavor, 64), (c) => c.notNull())
        .addColumn('name', 'varchar(100)', (c) => c.notNull())
        .addColumn('price', bigint(flavor), (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addPrimaryKeyConstraint('gift_catalog_pk', ['app_code', 'gift_id'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const t of ['gift_catalog', 'wallet_ledger', 'wallets', 'room_list_entries', 'rooms']) {
        await db.schema.dropTable(t).execute();
      }
    },
  };
}
