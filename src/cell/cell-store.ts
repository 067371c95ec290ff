/**
 * Port of the durable side of a cell: activation (the SQL fence), recovery rows, the
 * idempotency lookup and the one-transaction commit of a batch.
 */
import type { CompiledQuery, QueryCreator, Transaction } from 'kysely';
import type { Database } from '../adapters/sql/schema.js';
import type { DomainError } from '../shared/errors.js';
import type { CellKey } from './lease.js';

export interface LoggedCommand {
  readonly version: number;
  readonly requestId: string;
  /** JSON array of events. */
  readonly events: string;
}

/** What activation hands the runtime: the fence it now holds and what to replay. */
export interface ActivatedCell {
  readonly leaseEpoch: number;
  readonly version: number;
  readonly snapshot: string | null;
  readonly snapshotVersion: number;
  /** Every logged command after `snapshotVersion`, in version order. */
  readonly log: readonly LoggedCommand[];
}

export interface LogRow {
  readonly version: number;
  readonly requestId: string;
  readonly commandType: string;
  readonly payload: string;
  readonly events: string;
  readonly result: string;
}

export interface OutboxRow {
  readonly eventId: string;
  readonly roomVersion: number;
  readonly eventType: string;
  readonly envelope: string;
}

/** What one batch writes besides the domain's own rows. */
export interface BatchWrite {
  readonly toVersion: number;
  readonly log: readonly LogRow[];
  readonly outbox: readonly OutboxRow[];
  readonly nextAlarmMs: number | null;
  /** Written when due (every N versions). */
  readonly snapshot: { readonly json: string; readonly version: number } | null;
  /** The domain's projection statements, run after the log and outbox rows. */
  readonly statements: readonly CompiledQuery[];
}

/** Handed to the batch builder inside the transaction. */
export interface BatchTransaction {
  readonly trx: Transaction<Database>;
  /**
   * Runs `fn` under a savepoint: when it returns a DomainError its writes are undone and
   * the error is passed back, otherwise they are kept.
   */
  attempt(fn: () => Promise<DomainError | null>): Promise<DomainError | null>;
}

export interface CommitRequest {
  readonly key: CellKey;
  readonly nodeId: string;
  readonly leaseEpoch: number;
  readonly fromVersion: number;
  /** Read at verify time: a renewal may have replaced the token since the batch began. */
  readonly leaseToken: () => string;
  /**
   * True when a command of the batch must run work inside the transaction: `build` then
   * gets a live transaction. Otherwise `build` runs before any I/O and the store may send
   * the whole write in one round trip.
   */
  readonly interactive: boolean;
  /** Decides the batch; null means nothing to write. */
  build(tx: BatchTransaction | null): Promise<BatchWrite | null>;
  /** The Redis check the seed demands before the fence and the log/outbox writes. */
  verifyOwner(): Promise<boolean>;
}

export type CommitOutcome =
  | { readonly kind: 'committed'; readonly write: BatchWrite | null }
  /** Lease lost or lease_epoch / version moved: nothing was written. */
  | { readonly kind: 'fenced'; readonly reason: string }
  /** A request id of the batch is already logged (a retry racing its first attempt). */
  | { readonly kind: 'duplicate_request' };

export interface DueCell {
  readonly key: CellKey;
  readonly kind: string;
}

export interface RecordedResult {
  readonly version: number;
  readonly result: string;
}

export interface CellStore {
  /** Builds (does not run) the domain's projection queries. */
  readonly queries: QueryCreator<Database>;
  /**
   * Creates the row if missing (when `create`), bumps `lease_epoch` (fencing every earlier
   * owner) and loads. Null when the row does not exist and `create` is false.
   */
  activate(
    key: CellKey,
    kind: string,
    nodeId: string,
    nowMs: number,
    create: boolean,
  ): Promise<ActivatedCell | null>;
  commit(request: CommitRequest, nowMs: number): Promise<CommitOutcome>;
  /** Recorded results of already-logged request ids. */
  findResults(key: CellKey, requestIds: readonly string[]): Promise<Map<string, RecordedResult>>;
  /** Writes a snapshot if this node still holds the fence; false when fenced out. */
  saveSnapshot(
    key: CellKey,
    leaseEpoch: number,
    version: number,
    json: string,
    nowMs: number,
  ): Promise<boolean>;
  /** Rooms whose alarm is due (for the sweeper), oldest first. */
  dueAlarms(nowMs: number, limit: number): Promise<DueCell[]>;
}
