/**
 * The types a cell (./cell.ts) and its batches (./batch-runner.ts) share: what a cell is given,
 * what it holds, what it queues and what it counts.
 */
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { BatchCommand, CommandResult } from './batch.js';
import type { CellEvents, CloseReason } from './cell-events.js';
import type { CellStore, StoreTypes } from './cell-store.js';
import type { Tip } from './flight.js';
import type { CellMetrics } from './metrics.js';

export interface CellDeps<T extends StoreTypes> {
  readonly store: CellStore<T>;
  readonly metrics: CellMetrics;
  readonly logger: Logger;
  readonly nowMs: () => number;
  readonly verifyOwner: (token: string) => Promise<boolean>;
  /**
   * After a commit found the lease gone (not ours any more): takes it again if it is free
   * and answers the new token, or null (another node holds it, the node is draining). The
   * cell then keeps its lease epoch: the SQL fence refuses its next commit if another node
   * activated the room meanwhile. Absent: the cell closes, as when the lease was taken.
   */
  readonly reclaimLease?: () => Promise<string | null>;
  readonly nodeId: string;
  readonly snapshotEvery: number;
  readonly maxBatch: number;
}

/** A queued command and its caller. */
export interface Pending<C> extends BatchCommand<C> {
  readonly deadlineMs: number | undefined;
  readonly resolve: (result: CommandResult) => void;
  readonly reject: (error: unknown) => void;
}

/** What a cell committed since it was loaded on this node (the admin API shows it). */
export interface CellStats {
  readonly loadedAtMs: number;
  /** Commit transactions that wrote rows. */
  readonly batches: number;
  /** Commands that committed a new version. */
  readonly commands: number;
  /** Commands refused by the domain (their outcome recorded). */
  readonly refused: number;
  readonly lastCommitAtMs: number | null;
}

/**
 * The cell's committed state and the lease token it holds, shared with the cell: batches
 * advance it once committed; the cell reads it, snapshots it and renews the token.
 */
export interface CommittedTip<S> extends Tip<S> {
  state: S;
  version: number;
  snapshotVersion: number;
  snapshotBytes: number;
  persisted: boolean;
  token: string;
}

/** What the batches need of their cell: whether it stopped, to stop it, its queue, its observers. */
export interface BatchCell<C> {
  isClosed(): boolean;
  close(reason: CloseReason, detail?: string): void;
  /** Puts commands back at the head of the queue, in their order. */
  requeue(commands: readonly Pending<C>[]): void;
  readonly observer: EventEmitter<CellEvents>;
}

export interface CellInit<S> {
  readonly state: S;
  readonly version: number;
  readonly snapshotVersion: number;
  /** The length of the loaded snapshot's JSON (0: none). */
  readonly snapshotBytes: number;
  readonly leaseEpoch: number;
  readonly leaseToken: string;
  /** False while the room has no row (see {@link ActivatedCell.persisted}). */
  readonly persisted: boolean;
}
