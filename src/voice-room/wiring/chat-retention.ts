/**
 * Retention of voice rooms' public chat: a live room can run for months, so messages go by
 * age (`ROOMS_VOICE_CHAT_RETENTION_MS`, default 7 days), not with the room. Every relay
 * node sweeps every `intervalMs`; sweeps at once only overlap (each DELETE names its rows by
 * primary key). Deletes go in batches, a bounded number per sweep, so no statement holds many
 * locks or runs long; a backlog is worked off over several sweeps.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../adapters/sql/schema.js';
import type { Clock } from '../../shared/clock.js';
import { SweepJob } from '../../shared/periodic-sweep.js';
import { deleteOldMessages } from '../sql/chat.js';

export interface VoiceChatRetentionConfig {
  /** Age after which a message is deleted; 0 keeps them. */
  readonly retentionMs: number;
  /** Time between sweeps (default ten minutes). */
  readonly intervalMs?: number;
  /** Rows per DELETE (default 500). */
  readonly batchSize?: number;
  /** DELETEs per sweep (default 20). */
  readonly maxBatchesPerSweep?: number;
}

export class VoiceChatRetention extends SweepJob {
  constructor(
    readonly config: VoiceChatRetentionConfig,
    private readonly deps: {
      readonly db: Kysely<Database>;
      readonly clock: Clock;
      readonly logger: Logger;
    },
  ) {
    super({
      intervalMs: config.intervalMs ?? 600_000,
      logger: deps.logger.child({ module: 'voice-chat-retention' }),
      what: 'voice chat retention',
    });
  }

  override get enabled(): boolean {
    return this.config.retentionMs > 0;
  }

  protected override async sweepOnce(): Promise<number> {
    if (!this.enabled) return 0;
    const beforeMs = this.deps.clock.nowMs() - this.config.retentionMs;
    const batchSize = this.config.batchSize ?? 500;
    let deleted = 0;
    for (
      let left = this.config.maxBatchesPerSweep ?? 20;
      left > 0 && !this.loop.isStopped;
      left--
    ) {
      const batch = await deleteOldMessages(this.deps.db, beforeMs, batchSize);
      deleted += batch.deleted;
      if (batch.found < batchSize) break;
    }
    if (deleted > 0) this.logger.info({ deleted }, 'deleted old voice chat messages');
    return deleted;
  }
}
