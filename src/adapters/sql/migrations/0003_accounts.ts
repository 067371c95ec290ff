import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType } from '../flavor.js';

/**
 * Accounts: the `users` table. Usernames are unique per app, case-insensitively: the unique
 * key is on `username_key` (the lower-cased username), `username` keeps the spelling chosen
 * at registration.
 */
export function accountTables(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('users')
        // SQLite only auto-increments a column typed exactly `integer`, which bigint() gives it.
        .addColumn('id', bigint(flavor), (c) => c.primaryKey().autoIncrement())
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('username', idType(flavor, 32), (c) => c.notNull())
        .addColumn('username_key', idType(flavor, 32), (c) => c.notNull())
        .addColumn('password_hash', idType(flavor, 100), (c) => c.notNull())
        // Free text, but idType also pins MySQL to utf8mb4 whatever the database default is.
        .addColumn('nickname', idType(flavor, 64), (c) => c.notNull())
        .addColumn('avatar', idType(flavor, 512), (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .addUniqueConstraint('users_app_username', ['app_code', 'username_key'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('users').execute();
    },
  };
}
