import type { Kysely } from 'kysely';

/** The user search's nickname prefixes (`GET /api/v1/users/search`) read an index range. */
export function userNicknameIndex() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('users_app_nickname')
        .on('users')
        .columns(['app_code', 'nickname'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('users_app_nickname').on('users').execute();
    },
  };
}
