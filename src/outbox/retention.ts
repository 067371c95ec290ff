/**
 * Retention of settled outbox rows: without it `room_outbox` grows by one row per event
 * forever. Every node with a relay runs a sweep every `intervalMs` that deletes delivered
 * and skipped rows settled more than `settledMs` ago, and failed rows (dead letters, kept
 * longer so an operator can still re-queue them) settled more than `failedMs` ago.
 * Pending, retryable and delivering rows are never deleted.
 *
 * Deletes go in batches of `batchSize` rows by primary key (see
 * {@link OutboxStore.deleteSettled}), at most `maxBatchesPerSweep` per sweep, so no
 * statement holds many locks or runs long; nodes sweeping at once only overlap.
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { SweepJob } from '../shared/periodic-sweep.js';
import type { OutboxStore, SettledStatus } from './outbox-store.js';

export interface RetentionConfig {
  /** Age after which delivered and skipped rows are deleted; 0 keeps them. */
  readonly settledMs: number;
  /** Age after which failed rows are deleted; 0 keeps them. */
  readonly failedMs: number;
  /** Time between sweeps (default one minute). */
  readonly intervalMs?: number;
  /** Rows per DELETE (default 500). */
  readonly batchSize?: number;
  /** DELETEs per sweep (default 20): a large backlog is worked off over several sweeps. */
  readonly maxBatchesPerSweep?: number;
}

export interface RetentionDeps {
  readonly store: OutboxStore;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class OutboxRetention extends SweepJob {
  constructor(
    readonly config: RetentionConfig,
    private readonly deps: RetentionDeps,
  ) {
    super({
      intervalMs: config.intervalMs ?? 60_000,
      logger: deps.logger.child({ module: 'outbox-retention' }),
      what: 'outbox retention sweep',
    });
  }

  /** True when there is anything to delete at all. */
  override get enabled(): boolean {
    return this.config.settledMs > 0 || this.config.failedMs > 0;
  }

  protected override async sweepOnce(): Promise<number> {
    const now = this.deps.clock.nowMs();
    const { settledMs, failedMs } = this.config;
    const batchSize = this.config.batchSize ?? 500;
    let budget = this.config.maxBatchesPerSweep ?? 20;
    const passes: [readonly SettledStatus[], number][] = [];
    if (settledMs > 0) passes.push([['delivered', 'skipped'], now - settledMs]);
    if (failedMs > 0) passes.push([['failed'], now - failedMs]);
    let deleted = 0;
    for (const [statuses, updatedBeforeMs] of passes) {
      while (budget > 0 && !this.loop.isStopped) {
        budget -= 1;
        const n = await this.deps.store.deleteSettled({
          statuses,
          updatedBeforeMs,
          limit: batchSize,
        });
        deleted += n;
        if (n < batchSize) break;
      }
    }
    if (deleted > 0) this.logger.info({ deleted }, 'outbox retention deleted settled events');
    return deleted;
  }
}
