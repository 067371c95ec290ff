/** What a cell tells its observers: each commit, and once, why it closed. */
import type { Command, DecidedEntry, DomainEvent } from './domain.js';
import type { RoomEventEnvelope } from './envelope.js';
import type { ReactionRow } from './cell-store.js';
import type { CellKey } from './lease.js';

/** What one commit made durable, announced right after COMMIT. */
export interface CommittedBatch {
  readonly key: CellKey;
  readonly kind: string;
  /** The room version after the batch. */
  readonly version: number;
  readonly entries: readonly DecidedEntry<Command, DomainEvent>[];
  /** The batch's outbox envelopes, in order: the realtime frames' payload. */
  readonly envelopes: readonly RoomEventEnvelope[];
  /** The post-commit reactions it recorded, in order (./reactions.ts runs them). */
  readonly reactions: readonly ReactionRow[];
}

/**
 * Why a cell stopped. `fenced`: another owner took over or a commit's outcome is unknown
 * (reload from SQL). `deactivated`: idle or drained, snapshot written and lease released.
 * `aborted`: the host stopped as if the process died. `not_created`: a refused creation.
 */
export type CloseReason = 'fenced' | 'deactivated' | 'aborted' | 'not_created';

export interface CellEvents {
  commit: [batch: CommittedBatch];
  close: [reason: CloseReason, detail: string];
}
