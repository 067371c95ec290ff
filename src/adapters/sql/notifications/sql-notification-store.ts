/** The notification centre's store on SQLite or MySQL (../database.ts). */
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type {
  NewNotification,
  NotificationStore,
  StoredNotification,
} from '../../../notifications/notification-store.js';
import type { SqlBackend } from '../database.js';
import { isLockConflict, isUniqueViolation } from '../flavor.js';
import type { Database, NotificationsTable } from '../schema.js';

type Row = Selectable<NotificationsTable>;

function fromRow(row: Row): StoredNotification {
  return {
    // BIGINT columns may come back as strings or bigints depending on the driver.
    id: Number(row.id),
    appCode: row.app_code,
    userId: row.user_id,
    type: row.type,
    title: row.title,
    content: row.content,
    extra: row.extra,
    isRead: Number(row.is_read) === 1,
    readAtMs: row.read_at_ms === null ? null : Number(row.read_at_ms),
    createdAtMs: Number(row.created_at_ms),
  };
}

/**
 * One INSERT per row: the id of each row is its statement's insertId. A multi-row INSERT
 * tells MySQL's client only the first id, and the others are not reliably consecutive
 * (auto_increment_increment, interleaved lock mode).
 */
async function insertRows(
  trx: Transaction<Database>,
  appCode: string,
  rows: readonly NewNotification[],
  nowMs: number,
  requestKey: string | null,
): Promise<StoredNotification[]> {
  const out: StoredNotification[] = [];
  for (const row of rows) {
    const values = {
      app_code: appCode,
      user_id: row.userId,
      type: row.type,
      title: row.title,
      content: row.content,
      extra: row.extra,
      is_read: 0,
      read_at_ms: null,
      created_at_ms: nowMs,
      request_key: requestKey,
    };
    const result = await trx.insertInto('notifications').values(values).executeTakeFirst();
    if (result.insertId === undefined) throw new Error('notification insert returned no id');
    out.push(fromRow({ id: Number(result.insertId), ...values }));
  }
  return out;
}

/** A racing copy under one key: its rows won the unique key, or (MySQL) the locks deadlocked. */
const RACE_ATTEMPTS = 3;

export class SqlNotificationStore implements NotificationStore {
  constructor(private readonly sql: SqlBackend) {}

  async insertBatch(
    appCode: string,
    rows: readonly NewNotification[],
    nowMs: number,
  ): Promise<StoredNotification[]> {
    if (rows.length === 0) return [];
    return this.sql.db.transaction().execute((trx) => insertRows(trx, appCode, rows, nowMs, null));
  }

  async insertBatchOnce(
    appCode: string,
    requestKey: string,
    rows: readonly NewNotification[],
    nowMs: number,
  ): Promise<{ inserted: boolean; rows: StoredNotification[] }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.sql.db.transaction().execute(async (trx) => {
          // A locking read on MySQL: it waits for a racing copy's commit and then sees its
          // rows; an empty range stays locked, so two copies cannot both find none and insert
          // (one of them deadlocks and tries again). SQLite runs one transaction at a time.
          const earlier = await this.#byKey(trx, appCode, requestKey, true);
          if (earlier.length > 0) return { inserted: false, rows: earlier };
          return { inserted: true, rows: await insertRows(trx, appCode, rows, nowMs, requestKey) };
        });
      } catch (error) {
        if (attempt >= RACE_ATTEMPTS || !(isUniqueViolation(error) || isLockConflict(error))) {
          throw error;
        }
      }
    }
  }

  listByRequestKey(appCode: string, requestKey: string): Promise<StoredNotification[]> {
    return this.#byKey(this.sql.db, appCode, requestKey, false);
  }

  async #byKey(
    db: Kysely<Database>,
    appCode: string,
    requestKey: string,
    lock: boolean,
  ): Promise<StoredNotification[]> {
    // The locking read names its index: on a small table MySQL may prefer one on app_code
    // alone and lock every row of the app; this way only the request's own range is locked.
    const rows =
      lock && this.sql.flavor === 'mysql'
        ? (
            await sql<Row>`SELECT * FROM notifications FORCE INDEX (notifications_request)
              WHERE app_code = ${appCode} AND request_key = ${requestKey} FOR UPDATE`.execute(db)
          ).rows
        : await db
            .selectFrom('notifications')
            .selectAll()
            .where('app_code', '=', appCode)
            .where('request_key', '=', requestKey)
            .execute();
    return rows.map(fromRow).sort((a, b) => a.id - b.id);
  }

  async list(
    appCode: string,
    userId: string,
    beforeId: number | null,
    limit: number,
  ): Promise<StoredNotification[]> {
    let query = this.sql.db
      .selectFrom('notifications')
      .selectAll()
      .where('app_code', '=', appCode)
      .where('user_id', '=', userId);
    if (beforeId !== null) query = query.where('id', '<', beforeId);
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(fromRow);
  }

  async unreadCount(appCode: string, userId: string): Promise<number> {
    const row = await this.sql.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('app_code', '=', appCode)
      .where('user_id', '=', userId)
      .where('is_read', '=', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async markRead(
    appCode: string,
    userId: string,
    id: number,
    nowMs: number,
  ): Promise<StoredNotification | null> {
    // Only an unread row changes, so a repeat keeps the first read time.
    await this.sql.db
      .updateTable('notifications')
      .set({ is_read: 1, read_at_ms: nowMs })
      .where('app_code', '=', appCode)
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .where('is_read', '=', 0)
      .execute();
    const row = await this.sql.db
      .selectFrom('notifications')
      .selectAll()
      .where('app_code', '=', appCode)
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? fromRow(row) : null;
  }

  async markAllRead(appCode: string, userId: string, nowMs: number): Promise<number> {
    const result = await this.sql.db
      .updateTable('notifications')
      .set({ is_read: 1, read_at_ms: nowMs })
      .where('app_code', '=', appCode)
      .where('user_id', '=', userId)
      .where('is_read', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
