import type { Kysely } from 'kysely';

/**
 * An index for "how many open rooms does this owner have" (the per-owner room quota asks it
 * on every creation): without it the count reads every room of the app.
 */
export function roomOwnerIndex() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('rooms_owner_status')
        .on('rooms')
        .columns(['app_code', 'owner_user_id', 'status'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('rooms_owner_status').on('rooms').execute();
    },
  };
}
