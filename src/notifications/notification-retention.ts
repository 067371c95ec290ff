/**
 * Retention of notifications: the `notifications` table would otherwise grow forever. Two
 * bounds, both applied by one sweep that every node runs every `intervalMs`:
 *
 * - age: rows created more than `retentionMs` ago are deleted (the `notifications_created`
 *   index picks them, oldest first; each DELETE names its rows by primary key);
 * - per recipient: only the newest `maxPerUser` rows of a recipient are kept. A recipient
 *   can only pass the cap by receiving, so a sweep looks only at the recipients of rows
 *   added since the rows it has already looked at (ids above a cursor kept per instance; a
 *   fresh node starts from the beginning once), counts their rows in one grouped query per
 *   app, and trims those over the cap from their oldest rows.
 *
 * Deletes go in batches of `batchSize` rows, at most `maxBatchesPerSweep` statements (DELETEs
 * and scans) per sweep, so no statement holds many locks or runs long and a backlog is worked
 * off over several sweeps. Nodes sweeping at once only overlap: a row deleted twice is deleted
 * once. An id committed after a larger one (MySQL hands ids out before commit) may be passed
 * by the cursor; its recipient is looked at again with their next notification, so the cap is
 * exact up to what arrived since then.
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { SweepJob } from '../shared/periodic-sweep.js';

/** A recipient: one user of one app. */
export interface NotificationRecipient {
  readonly appCode: string;
  readonly userId: string;
}

/** What a bounded DELETE did: `found` rows picked (another node may have deleted some first). */
export interface DeletedBatch {
  readonly found: number;
  readonly deleted: number;
}

/** Port: the notification rows (the SQL adapter: src/adapters/sql/notifications/). */
export interface NotificationRetentionStore {
  /**
   * Deletes at most `limit` rows with `created_at_ms < createdBeforeMs`, oldest first; fewer
   * than `limit` found means none are left.
   */
  deleteCreatedBefore(request: {
    readonly createdBeforeMs: number;
    readonly limit: number;
  }): Promise<DeletedBatch>;
  /**
   * The distinct recipients of the first `limit` rows with `id > afterId` (in id order),
   * how many rows it looked at, and the id of the last one (null when there is none).
   */
  recipientsAfter(request: { readonly afterId: number; readonly limit: number }): Promise<{
    readonly recipients: readonly NotificationRecipient[];
    readonly scanned: number;
    readonly lastId: number | null;
  }>;
  /** Those of `userIds` (recipients in `appCode`) who have more than `keep` rows. */
  overCap(appCode: string, userIds: readonly string[], keep: number): Promise<string[]>;
  /**
   * Deletes at most `limit` rows of one recipient, oldest first, never one of its newest
   * `keep`; fewer than `limit` found means the recipient is within the cap.
   */
  trimRecipient(request: {
    readonly appCode: string;
    readonly userId: string;
    readonly keep: number;
    readonly limit: number;
  }): Promise<DeletedBatch>;
}

export interface NotificationRetentionConfig {
  /** Age after which a notification is deleted; 0 keeps notifications however old. */
  readonly retentionMs: number;
  /** Newest notifications kept per recipient; 0: no cap. */
  readonly maxPerUser: number;
  /** Time between sweeps (default ten minutes). */
  readonly intervalMs?: number;
  /** Rows per DELETE (default 500). */
  readonly batchSize?: number;
  /** Statements per sweep (default 20): a large backlog is worked off over several sweeps. */
  readonly maxBatchesPerSweep?: number;
  /** Rows looked at per scan for recipients over the cap (default 1000). */
  readonly scanSize?: number;
}

export class NotificationRetention extends SweepJob {
  /** Every recipient of a row up to this id has been brought within the cap (as far as this instance knows). */
  private cappedThroughId = 0;

  constructor(
    readonly config: NotificationRetentionConfig,
    private readonly deps: {
      readonly store: NotificationRetentionStore;
      readonly clock: Clock;
      readonly logger: Logger;
    },
  ) {
    super({
      intervalMs: config.intervalMs ?? 600_000,
      logger: deps.logger.child({ module: 'notification-retention' }),
      what: 'notification retention',
    });
  }

  override get enabled(): boolean {
    return this.config.retentionMs > 0 || this.config.maxPerUser > 0;
  }

  protected override async sweepOnce(): Promise<number> {
    if (!this.enabled) return 0;
    const budget = { left: this.config.maxBatchesPerSweep ?? 20 };
    const expired = this.config.retentionMs > 0 ? await this.deleteExpired(budget) : 0;
    const trimmed = this.config.maxPerUser > 0 ? await this.trimOverCap(budget) : 0;
    if (expired + trimmed > 0) this.logger.info({ expired, trimmed }, 'deleted notifications');
    return expired + trimmed;
  }

  private get batchSize(): number {
    return this.config.batchSize ?? 500;
  }

  /** True while the sweep may run one more statement (and takes it from the budget). */
  private spend(budget: { left: number }): boolean {
    if (budget.left <= 0 || this.loop.isStopped) return false;
    budget.left -= 1;
    return true;
  }

  private async deleteExpired(budget: { left: number }): Promise<number> {
    const createdBeforeMs = this.deps.clock.nowMs() - this.config.retentionMs;
    let deleted = 0;
    while (this.spend(budget)) {
      const batch = await this.deps.store.deleteCreatedBefore({
        createdBeforeMs,
        limit: this.batchSize,
      });
      deleted += batch.deleted;
      if (batch.found < this.batchSize) break;
    }
    return deleted;
  }

  private async trimOverCap(budget: { left: number }): Promise<number> {
    const { store } = this.deps;
    const keep = this.config.maxPerUser;
    const scanSize = this.config.scanSize ?? 1_000;
    let deleted = 0;
    while (this.spend(budget)) {
      const scan = await store.recipientsAfter({ afterId: this.cappedThroughId, limit: scanSize });
      if (scan.lastId === null) break;
      const byApp = new Map<string, string[]>();
      for (const { appCode, userId } of scan.recipients) {
        const users = byApp.get(appCode) ?? [];
        users.push(userId);
        byApp.set(appCode, users);
      }
      for (const [appCode, userIds] of byApp) {
        for (const userId of await store.overCap(appCode, userIds, keep)) {
          for (;;) {
            // Out of budget: the cursor stays, the next sweep looks at these rows again.
            if (!this.spend(budget)) return deleted;
            const batch = await store.trimRecipient({
              appCode,
              userId,
              keep,
              limit: this.batchSize,
            });
            deleted += batch.deleted;
            if (batch.found < this.batchSize) break;
          }
        }
      }
      this.cappedThroughId = Math.max(this.cappedThroughId, scan.lastId);
      if (scan.scanned < scanSize) break;
    }
    return deleted;
  }
}
