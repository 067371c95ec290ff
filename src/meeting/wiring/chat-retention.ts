/**
 * Retention of meeting chats (meeting-api.md §12 保留策略): chat history is for the meeting,
 * not an IM stream, so the chats of a meeting ended (`status = 2`) more than `retentionMs`
 * ago are deleted. Every node runs a sweep every `intervalMs`; nodes sweeping at once only
 * overlap (each DELETE names its rows by primary key, a row deleted twice is deleted once).
 *
 * Deletes go in batches of `batchSize` rows, at most `maxBatchesPerSweep` per sweep, so no
 * statement holds many locks or runs long. Each instance remembers up to which end time it
 * has deleted everything (a meeting never ends twice and an ended one gets no more chats),
 * so a sweep only looks at meetings that crossed the line since the last complete sweep;
 * a fresh node starts from the beginning once.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { SweepJob } from '../../shared/periodic-sweep.js';

/** Port: the chats of ended meetings (the SQL adapter: src/meeting/sql/). */
export interface ChatRetentionStore {
  /**
   * Deletes at most `limit` chat rows of meetings with `status = 2` and
   * `endedFromMs <= ended_at_ms < endedBeforeMs`. `found`: the rows it picked (another
   * node may have deleted some first); fewer than `limit` means none are left.
   */
  deleteEndedChats(request: {
    readonly endedFromMs: number;
    readonly endedBeforeMs: number;
    readonly limit: number;
  }): Promise<{ readonly found: number; readonly deleted: number }>;
}

export interface ChatRetentionConfig {
  /** Age of a meeting's end after which its chats are deleted; 0 keeps them. */
  readonly retentionMs: number;
  /** Time between sweeps (default ten minutes). */
  readonly intervalMs?: number;
  /** Rows per DELETE (default 500). */
  readonly batchSize?: number;
  /** DELETEs per sweep (default 20): a large backlog is worked off over several sweeps. */
  readonly maxBatchesPerSweep?: number;
}

export class MeetingChatRetention extends SweepJob {
  /** Every chat of a meeting ended before this is gone (as far as this instance knows). */
  private cleanedBeforeMs = 0;

  constructor(
    readonly config: ChatRetentionConfig,
    private readonly deps: {
      readonly store: ChatRetentionStore;
      readonly clock: Clock;
      readonly logger: Logger;
    },
  ) {
    super({
      intervalMs: config.intervalMs ?? 600_000,
      logger: deps.logger.child({ module: 'meeting-chat-retention' }),
      what: 'meeting chat retention',
    });
  }

  override get enabled(): boolean {
    return this.config.retentionMs > 0;
  }

  protected override async sweepOnce(): Promise<number> {
    if (!this.enabled) return 0;
    const endedBeforeMs = this.deps.clock.nowMs() - this.config.retentionMs;
    const batchSize = this.config.batchSize ?? 500;
    let budget = this.config.maxBatchesPerSweep ?? 20;
    let deleted = 0;
    let complete = false;
    while (budget > 0 && !this.loop.isStopped) {
      budget -= 1;
      const batch = await this.deps.store.deleteEndedChats({
        endedFromMs: this.cleanedBeforeMs,
        endedBeforeMs,
        limit: batchSize,
      });
      deleted += batch.deleted;
      if (batch.found < batchSize) {
        complete = true;
        break;
      }
    }
    if (complete) this.cleanedBeforeMs = Math.max(this.cleanedBeforeMs, endedBeforeMs);
    if (deleted > 0) this.logger.info({ deleted }, 'deleted chats of ended meetings');
    return deleted;
  }
}
