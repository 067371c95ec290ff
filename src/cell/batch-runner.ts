/**
 * What a cell does with one batch, from its queue to the database and back: decided on the
 * committed state (or behind a batch in flight, see ./flight.ts), written in one transaction
 * under the fence, applied in memory only once committed, each caller answered with its own
 * outcome. A request id already decided is answered from memory or SQL; a batch rolled back
 * on a lock conflict runs again; a lease found gone is taken again when it is free. The cell
 * (./cell.ts) owns the queue, the lane and the stop; this owns what a batch does to them.
 */
import { errors } from '../shared/error-codes.js';
import { AppError } from '../shared/errors.js';
import {
  batchWrite,
  decideBatch,
  outcomeRows,
  parseOutcome,
  recordable,
  type DecidedBatch,
  type Outcome,
  type RecordedOutcome,
} from './batch.js';
import type { ReactionRow, StoreTypes } from './cell-store.js';
import type { BatchCell, CellDeps, CellStats, CommittedTip, Pending } from './cell-types.js';
import type { Flight, Tip } from './flight.js';
import { isSnapshotDue } from './snapshot-due.js';
import type { CellDomain, Command, DomainEvent } from './domain.js';
import type { RoomEventEnvelope } from './envelope.js';
import type { CellKey } from './lease.js';
import {
  answerCopy,
  closedError,
  deadlineError,
  isLockConflict,
  reusedError,
  settle,
  sleep,
} from './pending.js';

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

export class BatchRunner<
  S,
  C extends Command,
  E extends DomainEvent,
  T extends StoreTypes = StoreTypes,
> {
  readonly #key: CellKey;
  readonly #domain: CellDomain<S, C, E, T>;
  readonly #deps: CellDeps<T>;
  readonly #leaseEpoch: number;
  readonly #tip: CommittedTip<S>;
  readonly #cell: BatchCell<C>;
  readonly #seen = new Map<string, RecordedOutcome>();
  #stats: CellStats;

  constructor(
    key: CellKey,
    domain: CellDomain<S, C, E, T>,
    deps: CellDeps<T>,
    leaseEpoch: number,
    tip: CommittedTip<S>,
    cell: BatchCell<C>,
  ) {
    this.#key = key;
    this.#domain = domain;
    this.#deps = deps;
    this.#leaseEpoch = leaseEpoch;
    this.#tip = tip;
    this.#cell = cell;
    this.#stats = {
      loadedAtMs: deps.nowMs(),
      batches: 0,
      commands: 0,
      refused: 0,
      lastCommitAtMs: null,
    };
  }

  get stats(): CellStats {
    return this.#stats;
  }

  /** Decides, writes and answers `batch` (taken from the queue for `flight`). */
  async run(batch: Pending<C>[], flight: Flight<S>): Promise<void> {
    if (this.#cell.isClosed()) {
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
          this.#cell.requeue(todo.flat());
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
        this.#cell.close('fenced', 'commit failed');
      }
      for (const group of todo) for (const p of group) p.reject(failure);
    }
  }

  /**
   * {@link BatchRunner.#commitOnce}, run again when the database rolled it back on a lock conflict
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
        if (!isLockConflict(error) || retry > LOCK_RETRIES || this.#cell.isClosed()) throw error;
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
    if (!token || this.#cell.isClosed()) {
      this.#fail(todo, reason);
      return;
    }
    this.#tip.token = token;
    this.#deps.logger.info('lease was gone before a commit; taken again, the batch failed');
    for (const group of todo) for (const p of group) p.reject(closedError());
  }

  #fail(todo: Pending<C>[][], reason: string): void {
    this.#cell.close('fenced', reason);
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
          state: this.#tip.state,
          version: this.#tip.version,
          snapshotVersion: this.#tip.snapshotVersion,
          snapshotBytes: this.#tip.snapshotBytes,
          persisted: this.#tip.persisted,
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
        leaseToken: () => this.#tip.token,
        verifyOwner: async () => {
          // A batch behind one that did not commit is doomed: not worth sending.
          if (behind?.failed) return false;
          const ok = await this.#deps.verifyOwner(this.#tip.token);
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
          const snapshotDue = isSnapshotDue(base, decided.version, this.#deps.snapshotEvery);
          const built = batchWrite(this.#domain, this.#key, decided, outcomes, snapshotDue, nowMs);
          envelopes = built.envelopes;
          if (flight) {
            flight.tip = {
              state: decided.state,
              version: decided.version,
              snapshotVersion: built.write.snapshot?.version ?? base.snapshotVersion,
              snapshotBytes: built.write.snapshot?.json.length ?? base.snapshotBytes,
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
    if (this.#tip.version !== base.version) {
      throw new Error(`a batch from version ${base.version} committed at ${this.#tip.version}`);
    }
    this.#count(leaders.length, done, outcome.write !== null, nowMs);
    if (done.entries.length > 0) {
      this.#tip.state = done.state;
      this.#tip.version = done.version;
      this.#tip.persisted = true;
      if (outcome.write?.snapshot) {
        this.#tip.snapshotVersion = outcome.write.snapshot.version;
        this.#tip.snapshotBytes = outcome.write.snapshot.json.length;
      }
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
      this.#cell.observer.emit('commit', {
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
