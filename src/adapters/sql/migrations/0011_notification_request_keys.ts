import type { Kysely } from 'kysely';
import { type SqlFlavor, idType } from '../flavor.js';

/**
 * The key of the request that sent a notification (null: a sender without one), unique per
 * app and recipient: a retry of a request whose notifications committed, on any node, can
 * never write a second row for one recipient. The index also finds a request's rows.
 */
export function notificationRequestKeys(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('notifications')
        .addColumn('request_key', idType(flavor, 255))
        .execute();
      await db.schema
        .createIndex('notifications_request')
        .on('notifications')
        .columns(['app_code', 'request_key', 'user_id'])
        .unique()
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('notifications_request').on('notifications').execute();
      await db.schema.alterTable('notifications').dropColumn('request_key').execute();
    },
  };
}
