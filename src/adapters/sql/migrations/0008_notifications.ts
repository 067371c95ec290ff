import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType } from '../flavor.js';

/**
 * The notification centre: one row per recipient of a notification (a meeting invite, …).
 * Users page their list newest first by id, hence (app_code, user_id, id); the unread
 * count and "mark all read" look at one user's unread rows, hence (app_code, user_id,
 * is_read).
 */
export function notificationTables(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('notifications')
        // SQLite only auto-increments a column typed exactly `integer`, which bigint() gives it.
        .addColumn('id', bigint(flavor), (c) => c.primaryKey().autoIncrement())
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('user_id', idType(flavor, 64), (c) => c.notNull())
        .addColumn('type', idType(flavor, 32), (c) => c.notNull())
        .addColumn('title', 'varchar(200)', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('extra', 'text', (c) => c.notNull())
        .addColumn('is_read', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('read_at_ms', bigint(flavor))
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('notifications_user')
        .on('notifications')
        .columns(['app_code', 'user_id', 'id'])
        .execute();
      await db.schema
        .createIndex('notifications_unread')
        .on('notifications')
        .columns(['app_code', 'user_id', 'is_read'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('notifications').execute();
    },
  };
}
