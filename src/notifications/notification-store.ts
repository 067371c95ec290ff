/**
 * The notification centre's storage port: one row per recipient, ids increasing. The SQL
 * adapter is src/adapters/sql/notifications/; every method is scoped to one app and, except
 * the batch insert, to one recipient, so no call can read or change another user's rows.
 */

/** A notification row as stored. */
export interface StoredNotification {
  readonly id: number;
  readonly appCode: string;
  /** The recipient (a user id, decimal string). */
  readonly userId: string;
  readonly type: string;
  readonly title: string;
  readonly content: string;
  /** The JSON text of an object. */
  readonly extra: string;
  readonly isRead: boolean;
  readonly readAtMs: number | null;
  readonly createdAtMs: number;
}

/** One row to insert: the same notification for each recipient of a batch. */
export interface NewNotification {
  readonly userId: string;
  readonly type: string;
  readonly title: string;
  readonly content: string;
  readonly extra: string;
}

export interface NotificationStore {
  /**
   * Inserts every row in ONE transaction (all or none) and returns them with their ids, in
   * the order given.
   */
  insertBatch(
    appCode: string,
    rows: readonly NewNotification[],
    nowMs: number,
  ): Promise<StoredNotification[]>;
  /**
   * Like {@link insertBatch}, every row under the sending request's key (unique per app and
   * recipient) — unless rows under that key exist already (the request ran before, maybe on
   * another node): then it inserts nothing and returns those, `inserted: false`. Of two calls
   * racing under one key, one inserts its rows and the other gets them.
   */
  insertBatchOnce(
    appCode: string,
    requestKey: string,
    rows: readonly NewNotification[],
    nowMs: number,
  ): Promise<{ readonly inserted: boolean; readonly rows: StoredNotification[] }>;
  /** The rows written under a request's key (any recipient), in id order. */
  listByRequestKey(appCode: string, requestKey: string): Promise<StoredNotification[]>;
  /** The recipient's rows with `id < beforeId` (all when null), newest first, at most `limit`. */
  list(
    appCode: string,
    userId: string,
    beforeId: number | null,
    limit: number,
  ): Promise<StoredNotification[]>;
  unreadCount(appCode: string, userId: string): Promise<number>;
  /**
   * Marks one of the recipient's rows read (the first read time stays on a repeat) and
   * returns it; null when the recipient has no row of that id.
   */
  markRead(
    appCode: string,
    userId: string,
    id: number,
    nowMs: number,
  ): Promise<StoredNotification | null>;
  /** Marks every unread row of the recipient read; returns how many changed. */
  markAllRead(appCode: string, userId: string, nowMs: number): Promise<number>;
}
