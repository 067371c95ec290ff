/**
 * One loaded room: its state, its mailbox and its group commit. Everything a cell does
 * (batches, lease renewals, snapshots) runs on one serial lane, so a renewal never swaps
 * the lease token under a commit that is verifying it. A cell stops once, for one reason,
 * through {@link Cell.close}; its observer tells the host, realtime and metrics.
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { errors } from '../shared/error-codes.js';
import { AppError } from '../shared/errors.js';
import {
  batchWrite,
  decideBatch,
  outcomeRows,
  parseOutcome,
  recordable,
  sameRequest,
  type BatchCommand,
  type CommandResult,
  type DecidedBatch,
  type Outcome,
  type RecordedOutcome,
} from './batch.js';
import type { CellEvents, CloseReason } from './cell-events.js';
import type { CellStore, ReactionRow, StoreTypes } from './cell-store.js';
import { Flight, takeBatch, type Tip } from './flight.js';
import type { CellDomain, Command, DomainEvent } from './domain.js';
import type { RoomEventEnvelope } from './envelope.js';
import type { CellKey } from './lease.js';
import type { CellMetrics } from './metrics.js';
import { requestFingerprint } from './request-fingerprint.js';

export type { CommandResult } from './batch.js';
export type { CellEvents, CloseReason, CommittedBatch } from './cell-events.js';

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

export interface CellInit<S> {
  readonly state: S;
  readonly version: number;
  readonly snapshotVersion: number;
  readonly leaseEpoch: number;
  readonly leaseToken: string;
  /** False while the room has no row (see {@link ActivatedCell.persisted}). */
  readonly persisted: boolean;
}

interface Pending<C> extends BatchCommand<C> {
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

type Attempt =
  | { kind: 'done'; outcomes: ReadonlyMap<string, Outcome> }
  /** `leaseLost`: the Redis check failed (not the SQL fence): the lease may be free. */
  | { kind: 'fenced'; reason: string; leaseLost: boolean }
  | { kind: 'duplicate' };

/** Outcomes kept in memory per cell (older request ids are looked up in SQL). */
const SEEN_LIMIT = 4096;
/** Re-runs of a batch the database rolled back on a lock conflict, and their spacing. */
const LOCK_RETRIES = 5;
const LOCK_RETRY_BASE_MS = 10;

export class Cell<S, C extends Command, E extends DomainEvent, T extends StoreTypes = StoreTypes> {
  /** `commit` after every commit, in version order; `close` once. */
  readonly observer = new EventEmitter<CellEvents>();
  readonly #key: CellKey;
  readonly #domain: CellDomain<S, C, E, T>;
  readonly #deps: CellDeps<T>;
  readonly #leaseEpoch: number;
  #state: S;
  #version: number;
  #snapshotVersion: number;
  #token: string;
  #persisted: boolean;
  #closed: CloseReason | null = null;
  #queue: Pending<C>[] = [];
  #scheduled = false;
  #lane: Promise<void> = Promise.resolve();
  /** Lane tasks waiting for their turn (the running one not counted). */
  #laneWaiting = 0;
  #lastActivityMs: number;
  readonly #seen = new Map<string, RecordedOutcome>();
  #stats: CellStats;

  constructor(key: CellKey, domain: CellDomain<S, C, E, T>, init: CellInit<S>, deps: CellDeps<T>) {
    this.#key = key;
    this.#domain = domain;
    this.#deps = deps;
    this.#state = init.state;
    this.#version = init.version;
    this.#snapshotVersion = init.snapshotVersion;
    this.#leaseEpoch = init.leaseEpoch;
    this.#token = init.leaseToken;
    this.#persisted = init.persisted;
    this.#lastActivityMs = deps.nowMs();
    this.#stats = {
      loadedAtMs: this.#lastActivityMs,
      batches: 0,
      commands: 0,
      refused: 0,
      lastCommitAtMs: null,
    };
  }

  get key(): CellKey {
    return this.#key;
  }
  get domain(): CellDomain<S, C, E, T> {
    return this.#domain;
  }
  get currentState(): S {
    return this.#state;
  }
  get currentVersion(): number {
    return this.#version;
  }
  get leaseEpoch(): number {
    return this.#leaseEpoch;
  }
  get leaseToken(): string {
    return this.#token;
  }
  get lastActivityMs(): number {
    return this.#lastActivityMs;
  }
  get snapshotVersion(): number {
    return this.#snapshotVersion;
  }
  get stats(): CellStats {
    return this.#stats;
  }
  /** Commands waiting for the next batch. */
  get queued(): number {
    return this.#queue.length;
  }
  /** True once closed, for whatever reason. */
  get closed(): boolean {
    return this.#closed !== null;
  }
  get closeReason(): CloseReason | null {
    return this.#closed;
  }
  /** False until the room's first batch with events inserted its row. */
  get isPersisted(): boolean {
    return this.#persisted;
  }
  /** True while commands wait or a batch runs. */
  get busy(): boolean {
    return this.#scheduled || this.#queue.length > 0;
  }

  /**
   * Queues `command`. `fingerprint` names what the caller's request was (see
   * ./request-fingerprint.ts); without one, the command itself is what the request id names.
   */
  submit(
    command: C,
    requestId?: string,
    deadlineMs?: number,
    fingerprint?: string,
  ): Promise<CommandResult> {
    if (this.#closed) return Promise.reject(closedError());
    if (deadlineMs !== undefined && deadlineMs <= this.#deps.nowMs()) {
      return Promise.reject(deadlineError());
    }
    this.#lastActivityMs = this.#deps.nowMs();
    return new Promise<CommandResult>((resolve, reject) => {
      this.#queue.push({
        command,
        requestId: requestId ?? `auto:${randomUUID()}`,
        explicit: requestId !== undefined,
        // An id made up here names nothing a caller can send again: nothing to compare.
        fingerprint:
          requestId === undefined ? '' : (fingerprint ?? requestFingerprint('command', command)),
        deadlineMs,
        resolve,
        reject,
      });
      this.#schedule();
    });
  }

  /** Runs `task` on the cell's lane, after the work queued before it. */
  onLane<R>(task: () => Promise<R>): Promise<R> {
    this.#laneWaiting++;
    const run = this.#lane.then(() => {
      this.#laneWaiting--;
      return task();
    });
    this.#lane = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Replaces the lease token after a renewal (called on the lane). */
  setLeaseToken(token: string): void {
    this.#token = token;
  }

  /** Stops the cell for good (idempotent): queued commands fail with UNAVAILABLE. */
  close(reason: CloseReason, detail: string = reason): void {
    if (this.#closed) return;
    this.#closed = reason;
    if (reason === 'fenced') {
      this.#deps.metrics.fenced.inc();
      this.#deps.logger.warn({ reason: detail }, 'cell fenced out');
    } else {
      this.#deps.logger.debug({ reason, detail }, 'cell closed');
    }
    const queued = this.#queue;
    this.#queue = [];
    for (const p of queued) p.reject(closedError());
    this.observer.emit('close', reason, detail);
    this.observer.removeAllListeners();
  }

  /** Writes a snapshot of the current state; false when fenced out. */
  async snapshot(): Promise<boolean> {
    if (this.#closed) return false;
    if (this.#snapshotVersion === this.#version) return true;
    const ok = await this.#deps.store.saveSnapshot(
      this.#key,
      this.#leaseEpoch,
      this.#version,
      JSON.stringify(this.#state),
      this.#deps.nowMs(),
    );
    if (ok) this.#snapshotVersion = this.#version;
    return ok;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    void this.onLane(async () => {
      try {
        await this.#pump();
      } finally {
        this.#scheduled = false;
      }
      if (this.#queue.length > 0) this.#schedule();
    });
  }

  /**
   * Runs the queued commands batch after batch. Where the store pipelines, the next batch
   * is decided while the one before is in the database and sent behind it (two in flight
   * at most; see flight.ts). Returns with nothing in flight, so the lane's other work
   * (renewals, snapshots, unloading) always finds the cell at rest, and takes no more
   * commands once such work waits (after a full batch's worth).
   */
  async #pump(): Promise<void> {
    let ahead: Flight<S> | null = null;
    let taken = 0;
    while (!this.#closed) {
      // A turn of the lane takes at least one full batch's worth, as it would unpipelined.
      const yielding = taken >= this.#deps.maxBatch && this.#laneWaiting > 0;
      const batch = yielding ? null : this.#take(ahead);
      if (!batch) {
        if (!ahead) return;
        await ahead.done;
        ahead = null;
        await nextTurn();
        continue;
      }
      const flight: Flight<S> = new Flight<S>(ahead);
      flight.start(() => this.#runBatch(batch, flight));
      taken += batch.length;
      await flight.sentOrDone();
      if (ahead) {
        await ahead.done;
        // The answered callers' next commands arrive before the next batch is taken.
        await nextTurn();
      }
      ahead = flight.inDatabase ? flight : null;
    }
    await ahead?.done;
  }

  #take(ahead: Flight<S> | null): Pending<C>[] | null {
    return takeBatch(this.#queue, ahead, {
      maxBatch: this.#deps.maxBatch,
      split: this.#deps.store.pipelines,
      inTransaction: (p) => this.#domain.inTransaction?.appliesTo(p.command) ?? false,
    });
  }

  async #runBatch(batch: Pending<C>[], flight: Flight<S>): Promise<void> {
    if (this.#closed) {
      for (const p of batch) p.reject(closedError());
      return;
    }
    const started = performance.now();
    const nowMs = this.#deps.nowMs();
    // One leader per request id; later copies in the same batch share its outcome.
    const leaders = new Map<string, Pending<C>[]>();
    for (const p of batch) {
      if (p.deadlineMs !== undefined && p.deadlineMs <= nowMs) {
        p.reject(deadlineError());
        continue;
      }
      const known = this.#seen.get(p.requestId);
      const group = leaders.get(p.requestId);
      if (known) answerCopy(p, known);
      else if (group && group[0]!.fingerprint !== p.fingerprint) p.reject(reusedError());
      else if (group) group.push(p);
      else leaders.set(p.requestId, [p]);
    }
    // Copies of these wait for their answers rather than be decided behind this batch.
    if (this.#deps.store.pipelines) for (const id of leaders.keys()) flight.requestIds.add(id);
    let todo = [...leaders.values()];
    const committed = (outcomes: ReadonlyMap<string, Outcome>) => {
      this.#deps.metrics.batchSize.observe(todo.length);
      this.#deps.metrics.commitSeconds.observe((performance.now() - started) / 1000);
      for (const group of todo) settle(group, outcomes.get(group[0]!.requestId)!, false);
    };
    try {
      if (flight.behind) {
        // Decided behind a batch in flight: one try; if it does not commit, its commands
        // go back to the head of the queue and are decided again from the committed state.
        const outcome = await this.#commitOnce(
          todo.map((group) => group[0]!),
          flight,
        ).catch((error: unknown) => {
          if (isLockConflict(error)) return null;
          throw error;
        });
        this.#deps.metrics.pipelined.inc({
          outcome: outcome?.kind === 'done' ? 'committed' : 'decided_again',
        });
        if (outcome?.kind === 'done') {
          committed(outcome.outcomes);
        } else {
          // The doomed batches behind this one put theirs back first: arrival order holds.
          await flight.successorEnded();
          this.#queue.unshift(...todo.flat());
        }
        return;
      }
      // Work inside the transaction (a wallet debit) must not even start for a request id
      // an earlier owner already decided: look those up first. Other batches rely on the
      // outcomes' unique key instead, which costs nothing when there is no retry.
      if (todo.some((group) => this.#domain.inTransaction?.appliesTo(group[0]!.command))) {
        todo = await this.#answerFromStore(todo);
      }
      // A unique violation means a request id of the batch already has an outcome (an
      // earlier owner's): answer those from the store and decide the rest again.
      for (let attempt = 0; todo.length > 0; attempt++) {
        const outcome = await this.#commitRetryingLocks(
          todo.map((group) => group[0]!),
          attempt === 0 ? flight : null,
        );
        if (outcome.kind === 'done') {
          committed(outcome.outcomes);
          return;
        }
        if (outcome.kind === 'fenced' && outcome.leaseLost) {
          await this.#reclaimOrFail(todo, outcome.reason);
          return;
        }
        if (outcome.kind === 'fenced' || attempt > 0) {
          this.#fail(todo, outcome.kind === 'fenced' ? outcome.reason : 'request id collision');
          return;
        }
        await flight.successorEnded();
        const unanswered = await this.#answerFromStore(todo);
        if (unanswered.length === todo.length) {
          this.#fail(todo, 'command log already holds this version');
          return;
        }
        todo = unanswered;
      }
    } catch (error) {
      // A database that is unavailable says so (the edges pass its reason on to the caller).
      const failure =
        error instanceof AppError && error.kind === 'unavailable'
          ? error
          : errors.COMMIT_FAILED.withCause(error);
      if (isLockConflict(error)) {
        // Still losing after the retries, but rolled back: the state in memory is the
        // database's, so the cell stays; the callers retry.
        this.#deps.logger.warn({ err: error }, 'commit kept losing lock conflicts');
      } else {
        // Unknown outcome (e.g. the connection died at COMMIT): reload from SQL next time.
        this.#deps.logger.error({ err: error }, 'commit failed');
        this.close('fenced', 'commit failed');
      }
      for (const group of todo) for (const p of group) p.reject(failure);
    }
  }

  /**
   * {@link Cell.#commitOnce}, run again when the database rolled it back on a lock conflict
   * (a deadlock victim, a lock wait timeout): nothing of it was written and nothing was
   * applied in memory, so the batch is decided again from the same state, once the batch
   * behind it has ended. A reload would cost more and fail the same way.
   */
  async #commitRetryingLocks(
    leaders: readonly Pending<C>[],
    flight: Flight<S> | null,
  ): Promise<Attempt> {
    for (let retry = 1; ; retry++) {
      try {
        return await this.#commitOnce(leaders, retry === 1 ? flight : null);
      } catch (error) {
        if (!isLockConflict(error) || retry > LOCK_RETRIES || this.#closed) throw error;
        await flight?.successorEnded();
        this.#deps.metrics.lockRetries.inc();
        this.#deps.logger.info({ err: error, retry }, 'commit lost a lock conflict, retrying');
        // Jittered, so two transactions that deadlocked do not meet again at once.
        await sleep(LOCK_RETRY_BASE_MS * retry * (0.5 + Math.random()));
      }
    }
  }

  /**
   * The lease was gone at the check before COMMIT (expired, or Redis lost its keys: a
   * FLUSHALL, a restart). The batch fails UNAVAILABLE as the seed demands, nothing written;
   * but a lease nobody else took is taken again, so the room stays here with its state and
   * epoch instead of being reloaded, and its callers' retries commit at once.
   */
  async #reclaimOrFail(todo: Pending<C>[][], reason: string): Promise<void> {
    const token = await this.#deps.reclaimLease?.().catch((err: unknown) => {
      this.#deps.logger.warn({ err }, 'taking the lease again failed');
      return null;
    });
    if (!token || this.#closed) {
      this.#fail(todo, reason);
      return;
    }
    this.#token = token;
    this.#deps.logger.info('lease was gone before a commit; taken again, the batch failed');
    for (const group of todo) for (const p of group) p.reject(closedError());
  }

  #fail(todo: Pending<C>[][], reason: string): void {
    this.close('fenced', reason);
    for (const group of todo) for (const p of group) p.reject(closedError());
  }

  /** Answers the groups whose request id already has an outcome; returns the others. */
  async #answerFromStore(todo: Pending<C>[][]): Promise<Pending<C>[][]> {
    const explicit = todo.filter((group) => group[0]!.explicit);
    if (explicit.length === 0) return todo;
    const recorded = await this.#deps.store.findResults(
      this.#key,
      explicit.map((group) => group[0]!.requestId),
    );
    return todo.filter((group) => {
      const r = recorded.get(group[0]!.requestId);
      if (!r) return true;
      const known = parseOutcome(r.version, r.outcome);
      this.#remember(group[0]!.requestId, known);
      for (const p of group) answerCopy(p, known);
      return false;
    });
  }

  /**
   * One try of a batch: decided from the committed state, or behind a batch in flight
   * from the state that one will commit (see flight.ts), then written. Applied in memory
   * only once committed, and after the batch ahead was.
   */
  async #commitOnce(leaders: readonly Pending<C>[], flight: Flight<S> | null): Promise<Attempt> {
    try {
      const attempt = await this.#tryCommit(leaders, flight);
      if (attempt.kind !== 'done') flight?.fail();
      return attempt;
    } catch (error) {
      flight?.fail();
      throw error;
    }
  }

  async #tryCommit(leaders: readonly Pending<C>[], flight: Flight<S> | null): Promise<Attempt> {
    const behind = flight?.behind ?? null;
    // A batch is launched behind another only once that one is in the database, decided.
    const base: Tip<S> = behind
      ? behind.tip!
      : {
          state: this.#state,
          version: this.#version,
          snapshotVersion: this.#snapshotVersion,
          persisted: this.#persisted,
        };
    const nowMs = this.#deps.nowMs();
    let decided: DecidedBatch<S, C, E, T['statement']> | null = null;
    let envelopes: RoomEventEnvelope[] = [];
    let leaseLost = false;
    const outcome = await this.#deps.store.commit(
      {
        key: this.#key,
        nodeId: this.#deps.nodeId,
        leaseEpoch: this.#leaseEpoch,
        fromVersion: base.version,
        create: base.persisted ? null : { kind: this.#domain.kind },
        leaseToken: () => this.#token,
        verifyOwner: async () => {
          // A batch behind one that did not commit is doomed: not worth sending.
          if (behind?.failed) return false;
          const ok = await this.#deps.verifyOwner(this.#token);
          leaseLost = !ok;
          return ok;
        },
        interactive: leaders.some((p) => this.#domain.inTransaction?.appliesTo(p.command)),
        ...(flight ? { sent: () => flight.markSent() } : {}),
        build: async (tx) => {
          decided = await decideBatch(
            this.#domain,
            this.#key,
            base,
            leaders,
            tx,
            this.#deps.store.queries,
            nowMs,
          );
          const outcomes = outcomeRows(leaders, decided.outcomes);
          // A room that has no row and gets no event stays unwritten: refusals and no-ops
          // of a creation that did not happen leave nothing behind.
          if (decided.entries.length === 0 && (outcomes.length === 0 || !base.persisted)) {
            return null;
          }
          const snapshotDue = decided.version - base.snapshotVersion >= this.#deps.snapshotEvery;
          const built = batchWrite(this.#domain, this.#key, decided, outcomes, snapshotDue, nowMs);
          envelopes = built.envelopes;
          if (flight) {
            flight.tip = {
              state: decided.state,
              version: decided.version,
              snapshotVersion: built.write.snapshot?.version ?? base.snapshotVersion,
              persisted: base.persisted || decided.entries.length > 0,
            };
          }
          return built.write;
        },
      },
      nowMs,
    );
    if (outcome.kind === 'fenced') return { kind: 'fenced', reason: outcome.reason, leaseLost };
    if (outcome.kind === 'duplicate_request') return { kind: 'duplicate' };
    const done = decided as DecidedBatch<S, C, E, T['statement']> | null;
    if (!done) throw new Error('the store committed a batch it did not build');
    // Committed behind a batch: applied after it. Its fence let it commit only on top of
    // that batch, so that one committed too; if its outcome was unknown the cell closed.
    if (behind && !(await behind.committed)) throw closedError();
    if (this.#version !== base.version) {
      throw new Error(`a batch from version ${base.version} committed at ${this.#version}`);
    }
    this.#count(leaders.length, done, outcome.write !== null, nowMs);
    if (done.entries.length > 0) {
      this.#state = done.state;
      this.#version = done.version;
      this.#persisted = true;
      if (outcome.write?.snapshot) this.#snapshotVersion = outcome.write.snapshot.version;
      this.#announce(done, envelopes, outcome.write?.reactions ?? []);
    }
    for (const p of leaders) {
      const r = done.outcomes.get(p.requestId);
      if (r && p.explicit && recordable(r)) {
        this.#remember(p.requestId, { outcome: r, fingerprint: p.fingerprint });
      }
    }
    flight?.markCommitted();
    return { kind: 'done', outcomes: done.outcomes };
  }

  /** Tells the observers (the realtime bus) what just committed; never throws. */
  #announce(
    done: DecidedBatch<S, C, E, unknown>,
    envelopes: readonly RoomEventEnvelope[],
    reactions: readonly ReactionRow[],
  ): void {
    try {
      this.observer.emit('commit', {
        key: this.#key,
        kind: this.#domain.kind,
        version: done.version,
        entries: done.entries,
        envelopes,
        reactions,
      });
    } catch (err) {
      this.#deps.logger.warn({ err }, 'commit listener failed');
    }
  }

  #count(decided: number, done: DecidedBatch<S, C, E, unknown>, wrote: boolean, nowMs: number) {
    const applied = done.entries.length;
    let refused = 0;
    for (const outcome of done.outcomes.values()) if (!outcome.ok) refused++;
    const { commands, commits } = this.#deps.metrics;
    commands.inc({ outcome: 'applied' }, applied);
    commands.inc({ outcome: 'refused' }, refused);
    commands.inc({ outcome: 'noop' }, decided - applied - refused);
    if (!wrote) return;
    commits.inc();
    const s = this.#stats;
    this.#stats = {
      ...s,
      batches: s.batches + 1,
      commands: s.commands + applied,
      refused: s.refused + refused,
      lastCommitAtMs: nowMs,
    };
  }

  #remember(requestId: string, known: RecordedOutcome): void {
    if (this.#seen.size >= SEEN_LIMIT) this.#seen.delete(this.#seen.keys().next().value!);
    this.#seen.set(requestId, known);
  }
}

/**
 * A request id that already has an outcome: the same request gets that answer again; another
 * operation or body under the same id is refused, and the first outcome stays as it was.
 */
function answerCopy(p: Pending<unknown>, known: RecordedOutcome): void {
  if (sameRequest(known, p.fingerprint)) settle([p], known.outcome, true);
  else p.reject(reusedError());
}

/** Copies of one request id after the first (a retry racing it) are duplicates too. */
function settle(group: readonly Pending<unknown>[], outcome: Outcome, duplicate: boolean): void {
  group.forEach((p, i) => {
    if (!outcome.ok) p.reject(AppError.from(outcome.error));
    else if (duplicate || i > 0) p.resolve({ ...outcome.result, duplicate: true });
    else p.resolve(outcome.result);
  });
}

function isLockConflict(error: unknown): boolean {
  return error instanceof AppError && error.code === errors.DATABASE_LOCK_CONFLICT.code;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function deadlineError(): AppError {
  return errors.DEADLINE_EXCEEDED('the caller stopped waiting; nothing was done');
}

function reusedError(): AppError {
  return errors.REQUEST_ID_REUSED();
}

function closedError(): AppError {
  return errors.CELL_FENCED();
}
