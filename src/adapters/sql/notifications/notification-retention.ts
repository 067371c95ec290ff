/**
 * {@link NotificationRetentionStore} on SQL. Each bounded delete picks its ids first (an
 * index range: `notifications_created` by age, `notifications_user` newest first per
 * recipient), then deletes exactly those rows by primary key in one statement: SQLite has no
 * DELETE … LIMIT, and MySQL allows neither LIMIT in an IN subquery nor reading the table a
 * DELETE changes.
 */
import type { Kysely } from 'kysely';
import type {
  DeletedBatch,
  NotificationRecipient,
  NotificationRetentionStore,
} from '../../../notifications/notification-retention.js';
import type { Database } from '../schema.js';

/** The ids of the oldest rows created before `createdBeforeMs` (exported for the plan test). */
export function expiredIdsQuery(db: Kysely<Database>, createdBeforeMs: number, limit: number) {
  return db
    .selectFrom('notifications')
    .select('id')
    .where('created_at_ms', '<', createdBeforeMs)
    .orderBy('created_at_ms')
    .limit(limit);
}

async function deleteIds(
  db: Kysely<Database>,
  picked: readonly { id: number }[],
): Promise<DeletedBatch> {
  if (picked.length === 0) return { found: 0, deleted: 0 };
  const result = await db
    .deleteFrom('notifications')
    .where(
      'id',
      'in',
      picked.map((r) => Number(r.id)),
    )
    .executeTakeFirst();
  return { found: picked.length, deleted: Number(result.numDeletedRows) };
}

export function sqlNotificationRetentionStore(db: Kysely<Database>): NotificationRetentionStore {
  return {
    async deleteCreatedBefore({ createdBeforeMs, limit }) {
      if (limit <= 0) return { found: 0, deleted: 0 };
      return deleteIds(db, await expiredIdsQuery(db, createdBeforeMs, limit).execute());
    },

    async recipientsAfter({ afterId, limit }) {
      const rows = await db
        .selectFrom('notifications')
        .select(['id', 'app_code', 'user_id'])
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
      const seen = new Map<string, NotificationRecipient>();
      for (const row of rows) {
        seen.set(`${row.app_code}\n${row.user_id}`, { appCode: row.app_code, userId: row.user_id });
      }
      const last = rows[rows.length - 1];
      return {
        recipients: [...seen.values()],
        scanned: rows.length,
        lastId: last ? Number(last.id) : null,
      };
    },

    async overCap(appCode, userIds, keep) {
      if (userIds.length === 0) return [];
      const rows = await db
        .selectFrom('notifications')
        .select('user_id')
        .where('app_code', '=', appCode)
        .where('user_id', 'in', [...userIds])
        .groupBy('user_id')
        .having((eb) => eb.fn.countAll(), '>', keep)
        .execute();
      return rows.map((r) => r.user_id);
    },

    async trimRecipient({ appCode, userId, keep, limit }) {
      if (limit <= 0) return { found: 0, deleted: 0 };
      // Newest first, skipping the `keep` newest: what is left are the oldest to delete.
      const picked = await db
        .selectFrom('notifications')
        .select('id')
        .where('app_code', '=', appCode)
        .where('user_id', '=', userId)
        .orderBy('id', 'desc')
        .limit(limit)
        .offset(keep)
        .execute();
      return deleteIds(db, picked);
    },
  };
}
