/**
 * Port of the durable side of a cell: activation (the SQL fence), recovery rows, the
 * idempotency lookup and the one-transaction commit of a batch.
 */
import type { DomainError } from '../domain/decider.js';
import type { CellKey } from './lease.js';

/**
 * What a store hands a room kind's impure hooks, named by the store (the SQL adapter:
 * a Kysely transaction, its query builder and a built query). The runtime passes them
 * through and never looks inside.
 */
export interface StoreTypes {
  /** The open commit transaction the `inTransaction` hook writes in. */
  readonly tx: unknown;
  /** What the `project` hook builds its statements with. */
  readonly queries: unknown;
  /** One projection statement, run by the store in the commit transaction. */
  readonly statement: unknown;
}

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
  /**
   * False for a room that has no row yet: nothing was written, and the first batch that
   * produces events inserts the row (its fence). A creation that is refused writes nothing.
   */
  readonly persisted: boolean;
}

export interface LogRow {
  readonly version: number;
  readonly requestId: string;
  readonly commandType: string;
  readonly payload: string;
  readonly events: string;
  readonly result: string;
}

/**
 * The first decided outcome of a request id, success or refusal, recorded in the same
 * transaction as the batch: a retry on any node gets it back, never a new decision.
 */
export interface OutcomeRow {
  readonly requestId: string;
  /** The room version the answer reports. */
  readonly version: number;
  /** JSON: `{"reply": …}` or `{"error": {kind, code, message}}`. */
  readonly outcome: string;
}

export interface OutboxRow {
  readonly eventId: string;
  readonly roomVersion: number;
  readonly eventType: string;
  readonly envelope: string;
}

/** A post-commit reaction as the batch records it (`room_reactions`). */
export interface ReactionRow {
  readonly reactionId: string;
  readonly roomVersion: number;
  readonly type: string;
  /** JSON of the reaction's data. */
  readonly data: string;
}

/** What one batch writes besides the domain's own rows. */
export interface BatchWrite<P = unknown> {
  readonly toVersion: number;
  readonly log: readonly LogRow[];
  readonly outbox: readonly OutboxRow[];
  /** The post-commit reactions the batch's events call for (./reactions.ts). */
  readonly reactions: readonly ReactionRow[];
  readonly outcomes: readonly OutcomeRow[];
  readonly nextAlarmMs: number | null;
  /** Written when due (every N versions). */
  readonly snapshot: { readonly json: string; readonly version: number } | null;
  /** The domain's projection statements, run after the log and outbox rows. */
  readonly statements: readonly P[];
}

/** Handed to the batch builder inside the transaction. */
export interface BatchTransaction<Tx = unknown> {
  readonly trx: Tx;
  /**
   * Runs `fn` under a savepoint: when it returns a DomainError its writes are undone and
   * the error is passed back, otherwise they are kept.
   */
  attempt(fn: () => Promise<DomainError | null>): Promise<DomainError | null>;
}

export interface CommitRequest<T extends StoreTypes = StoreTypes> {
  readonly key: CellKey;
  readonly nodeId: string;
  readonly leaseEpoch: number;
  readonly fromVersion: number;
  /** Set while the room has no row: the fence inserts it instead of updating it. */
  readonly create: { readonly kind: string } | null;
  /** Read at verify time: a renewal may have replaced the token since the batch began. */
  readonly leaseToken: () => string;
  /**
   * True when a command of the batch must run work inside the transaction: `build` then
   * gets a live transaction. Otherwise `build` runs before any I/O and the store may send
   * the whole write in one round trip.
   */
  readonly interactive: boolean;
  /** Decides the batch; null means nothing to write. */
  build(tx: BatchTransaction<T['tx']> | null): Promise<BatchWrite<T['statement']> | null>;
  /** The Redis check the seed demands before the fence and the log/outbox writes. */
  verifyOwner(): Promise<boolean>;
  /**
   * Called by a store that {@link CellStore.pipelines} once the write is in the database,
   * before its answer: the runtime may then decide the next batch on the state this one
   * will commit, and send it behind.
   */
  readonly sent?: () => void;
}

export type CommitOutcome<P = unknown> =
  | { readonly kind: 'committed'; readonly write: BatchWrite<P> | null }
  /** Lease lost or lease_epoch / version moved: nothing was written. */
  | { readonly kind: 'fenced'; readonly reason: string }
  /** A request id of the batch already has an outcome (a retry racing its first attempt). */
  | { readonly kind: 'duplicate_request' };

export interface DueCell {
  readonly key: CellKey;
  readonly kind: string;
  /** Its `next_alarm_ms`: with the key, where the sweeper's next page starts. */
  readonly alarmMs: number;
}

/** A position in the due alarms' order (alarm, app, room): the next page starts after it. */
export interface DueCursor {
  readonly alarmMs: number;
  readonly key: CellKey;
}

export interface RecordedResult {
  readonly version: number;
  /** The {@link OutcomeRow.outcome} JSON. */
  readonly outcome: string;
}

export interface ActivateOptions {
  /**
   * True while this node still holds the room's lease. A store whose activation finds the
   * room held by a stale owner's open transaction asks it before ending that transaction.
   */
  readonly confirmOwner?: () => Promise<boolean>;
}

export interface CellStore<T extends StoreTypes = StoreTypes> {
  /** Builds (does not run) the domain's projection statements. */
  readonly queries: T['queries'];
  /**
   * True when two batch writes of a room may be in the database at once, the second one's
   * fence expecting the version the first one commits (it waits for the first one's row
   * lock, and refuses when that one did not commit). Its non-interactive commits then call
   * {@link CommitRequest.sent}.
   */
  readonly pipelines: boolean;
  /**
   * Bumps `lease_epoch` (fencing every earlier owner) and loads. A missing row is not
   * created here: with `create` the cell starts unpersisted, otherwise the answer is null.
   * A row of another kind is refused before anything is written. An earlier owner that
   * stopped mid-commit must not hold the activation up past its lease (see `options`).
   */
  activate(
    key: CellKey,
    kind: string,
    nodeId: string,
    nowMs: number,
    create: boolean,
    options?: ActivateOptions,
  ): Promise<ActivatedCell | null>;
  commit(request: CommitRequest<T>, nowMs: number): Promise<CommitOutcome<T['statement']>>;
  /** The recorded outcomes of request ids that already have one. */
  findResults(key: CellKey, requestIds: readonly string[]): Promise<Map<string, RecordedResult>>;
  /** Writes a snapshot if this node still holds the fence; false when fenced out. */
  saveSnapshot(
    key: CellKey,
    leaseEpoch: number,
    version: number,
    json: string,
    nowMs: number,
  ): Promise<boolean>;
  /**
   * The room's current `lease_epoch`, null while it has no row: a cell whose epoch it still
   * is knows that no other node activated the room since it did.
   */
  leaseEpochOf(key: CellKey): Promise<number | null>;
  /** Rooms whose alarm is due (for the sweeper), oldest first; after `after` when given. */
  dueAlarms(nowMs: number, limit: number, after?: DueCursor | null): Promise<DueCell[]>;
}
