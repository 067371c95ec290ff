/**
 * Retention of the runtime's own logs, which otherwise grow by a row per command forever:
 *
 * - `room_command_log`: a room is activated from its snapshot and the log after it, so the
 *   rows at or below the room's snapshot version are needed by nothing but an operator
 *   reading history (the admin log API). They are deleted once older than `logMs`; rows
 *   above the snapshot are never deleted, whatever their age. Replay (`since_event_id`,
 *   `since_version`) reads the outbox, not this log.
 * - `room_request_outcomes`: the first outcome of every request id a caller named. A retry
 *   within `requestIdMs` gets that answer; after it the id is forgotten and a copy is
 *   decided as a new request. That window is the documented retry window. A command that
 *   took effect keeps its outcome as long as its log row is kept (the log's key on the
 *   request id would refuse a new use of it; ./cell.ts closes the cell on such a write).
 *
 * Every node runs the sweep; nodes sweeping at once only overlap (each DELETE names its rows
 * by primary key). Deletes go in batches of `batchSize` rows, at most `maxBatchesPerSweep`
 * per table and sweep, so no statement holds many locks or runs long.
 */
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { SweepJob } from '../shared/periodic-sweep.js';

/** Port: the runtime's logs (the SQL adapter: src/adapters/sql/log-retention-store.ts). */
export interface LogRetentionStore {
  /**
   * Deletes at most `limit` command-log rows that are at or below their room's snapshot
   * version and were written before `writtenBeforeMs`. `found`: the rows it picked (another
   * node may have deleted some first); fewer than `limit` means none are left.
   */
  deleteCompactedLog(request: {
    readonly writtenBeforeMs: number;
    readonly limit: number;
  }): Promise<{ readonly found: number; readonly deleted: number }>;
  /**
   * Deletes at most `limit` request outcomes recorded before `recordedBeforeMs` whose request
   * id the command log no longer holds.
   */
  deleteExpiredOutcomes(request: {
    readonly recordedBeforeMs: number;
    readonly limit: number;
  }): Promise<{ readonly found: number; readonly deleted: number }>;
}

export interface LogRetentionConfig {
  /** Age after which command-log rows below their room's snapshot are deleted; 0 keeps them. */
  readonly logMs: number;
  /** The retry window: age after which a request id's outcome is forgotten; 0 keeps them. */
  readonly requestIdMs: number;
  /** Time between sweeps (default ten minutes). */
  readonly intervalMs?: number;
  /** Rows per DELETE (default 500). */
  readonly batchSize?: number;
  /** DELETEs per table and sweep (default 20): a backlog is worked off over several sweeps. */
  readonly maxBatchesPerSweep?: number;
}

export class LogRetention extends SweepJob {
  constructor(
    readonly config: LogRetentionConfig,
    private readonly deps: {
      readonly store: LogRetentionStore;
      readonly clock: Clock;
      readonly logger: Logger;
    },
  ) {
    super({
      intervalMs: config.intervalMs ?? 600_000,
      logger: deps.logger.child({ module: 'log-retention' }),
      what: 'command log retention',
    });
  }

  override get enabled(): boolean {
    return this.config.logMs > 0 || this.config.requestIdMs > 0;
  }

  protected override async sweepOnce(): Promise<number> {
    const now = this.deps.clock.nowMs();
    const { logMs, requestIdMs } = this.config;
    const log =
      logMs > 0
        ? await this.#drain((limit) =>
            this.deps.store.deleteCompactedLog({ writtenBeforeMs: now - logMs, limit }),
          )
        : 0;
    const outcomes =
      requestIdMs > 0
        ? await this.#drain((limit) =>
            this.deps.store.deleteExpiredOutcomes({ recordedBeforeMs: now - requestIdMs, limit }),
          )
        : 0;
    if (log + outcomes > 0) {
      this.logger.info({ log, outcomes }, 'deleted compacted log rows and expired request ids');
    }
    return log + outcomes;
  }

  /** Batches until one comes back short, the budget is spent or the sweep is stopped. */
  async #drain(
    batch: (limit: number) => Promise<{ readonly found: number; readonly deleted: number }>,
  ): Promise<number> {
    const size = this.config.batchSize ?? 500;
    let budget = this.config.maxBatchesPerSweep ?? 20;
    let deleted = 0;
    while (budget > 0 && !this.loop.isStopped) {
      budget -= 1;
      const done = await batch(size);
      deleted += done.deleted;
      if (done.found < size) break;
    }
    return deleted;
  }
}
