import type { Kysely } from 'kysely';
import { type SqlFlavor, bigint, idType, jsonText } from '../flavor.js';

/**
 * The post-commit reactions of every batch (src/cell/reactions.ts): written in the commit's
 * transaction, deleted once carried out. A row still here after its owner's fast path (the
 * node died between COMMIT and the reaction, or the reaction failed) is claimed by a relay
 * when due and retried; `failed` rows gave up and are kept for an operator.
 */
export function roomReactionTables(flavor: SqlFlavor) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('room_reactions')
        .addColumn('reaction_id', idType(flavor, 64), (c) => c.primaryKey())
        .addColumn('app_code', idType(flavor, 64), (c) => c.notNull())
        .addColumn('room_id', idType(flavor, 128), (c) => c.notNull())
        .addColumn('room_version', bigint(flavor), (c) => c.notNull())
        .addColumn('reaction_type', idType(flavor, 64), (c) => c.notNull())
        .addColumn('data', jsonText(flavor), (c) => c.notNull())
        .addColumn('status', idType(flavor, 16), (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('claim_token', idType(flavor, 64))
        .addColumn('next_attempt_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at_ms', bigint(flavor), (c) => c.notNull())
        .addColumn('updated_at_ms', bigint(flavor), (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('room_reactions_due')
        .on('room_reactions')
        .columns(['status', 'next_attempt_at_ms'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('room_reactions').execute();
    },
  };
}
