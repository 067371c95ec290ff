import { sql, type Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType } from '../flavor.js';

/**
 * The outbox relay's tables: per-app webhook sinks (one HTTP endpoint and signing secret
 * per app), and an index for its claim.
 * The relay treats an app's webhook as the sink of all that app's events, so `room_outbox`
 * keeps one row per event and per-room order is per app.
 */
export function webhookTables(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('app_webhooks')
        .addColumn('app_code', idType(flavor, 64), (c) => c.primaryKey())
        // Never indexed, so a long URL costs nothing; compared only by the app that set it.
        .addColumn('url', sql.raw('varchar(2048)'), (c) => c.notNull())
        .addColumn('secret', sql.raw('varchar(256)'), (c) => c.notNull())
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .execute();
      // The relay's claim groups undelivered events by room (index-only, with the id).
      await db.schema
        .createIndex('room_outbox_room_heads')
        .on('room_outbox')
        .columns(['status', 'app_code', 'room_id', 'id'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('room_outbox_room_heads').on('room_outbox').execute();
      await db.schema.dropTable('app_webhooks').execute();
    },
  };
}
