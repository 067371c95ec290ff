/**
 * One loaded room: its state, its mailbox and its group commit. Everything a cell does
 * (batches, lease renewals, snapshots) runs on one serial lane, so a renewal never swaps
 * the lease token under a commit that is verifying it.
 */
import { randomUUID } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import type { Logger } from 'pino';
import { AppError, isDomainError, unavailable, type DomainError } from '../shared/errors.js';
import type {
  BatchTransaction,
  BatchWrite,
  CellStore,
  LogRow,
  OutboxRow,
  OutcomeRow,
} from './cell-store.js';
import type { CellDomain, Command, DecidedEntry, Decision, DomainEvent } from './domain.js';
import type { CellKey } from './lease.js';
import type { CellMetrics } from './metrics.js';

/** What a caller gets back for a command that took effect (now or on an earlier try). */
export interface CommandResult {
  /** The room version after the command (unchanged for a no-op). */
  readonly version: number;
  readonly reply: unknown;
  /** True when the request id was already logged and this is the recorded result. */
  readonly duplicate: boolean;
}

/** What one commit made durable, handed to the host's listener right after COMMIT. */
export interface CommittedBatch {
  readonly key: CellKey;
  readonly kind: string;
  /** The room version after the batch. */
  readonly version: number;
  readonly entries: readonly DecidedEntry<Command, DomainEvent>[];
  /** The outbox envelopes (JSON) of the batch, in order: the realtime frames' payload. */
  readonly envelopes: readonly string[];
}

export interface CellDeps {
  readonly store: CellStore;
  readonly metrics: CellMetrics;
  readonly logger: Logger;
  readonly nowMs: () => number;
  readonly verifyOwner: (token: string) => Promise<boolean>;
  readonly nodeId: string;
  readonly snapshotEvery: number;
  readonly maxBatch: number;
  /** Called after each commit, in version order (e.g. to publish to the realtime bus). */
  readonly onCommitted?: ((batch: CommittedBatch) => void) | undefined;
  /** Called once when the cell learns it is fenced out; the host forgets it. */
  readonly onFenced: (reason: string) => void;
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

interface Pending<C> {
  readonly command: C;
  readonly requestId: string;
  /** The caller named the request id (a retry may come): its outcome is recorded. */
  readonly explicit: boolean;
  readonly deadlineMs: number | undefined;
  readonly resolve: (result: CommandResult) => void;
  readonly reject: (error: unknown) => void;
}

type ReplyingEntry<C extends Command, E extends DomainEvent> = DecidedEntry<C, E> & {
  readonly reply: unknown;
};

interface Decided<S, C extends Command, E extends DomainEvent> {
  readonly state: S;
  readonly version: number;
  readonly entries: ReplyingEntry<C, E>[];
  readonly statements: CompiledQuery[];
}

type Outcome =
  | { ok: true; result: CommandResult }
  /** `version`: the room version the refusal was decided at. */
  | { ok: false; error: DomainError; version: number };

const SEEN_LIMIT = 4096;

export class Cell<S, C extends Command, E extends DomainEvent> {
  private state: S;
  private version: number;
  private snapshotVersion: number;
  readonly leaseEpoch: number;
  private token: string;
  private queue: Pending<C>[] = [];
  private scheduled = false;
  private lane: Promise<void> = Promise.resolve();
  private fenced = false;
  private persisted: boolean;
  /** Outcomes of request ids decided since activation (older ones are looked up in SQL). */
  private readonly seen = new Map<string, Outcome>();
  lastActivityMs: number;

  constructor(
    readonly key: CellKey,
    readonly domain: CellDomain<S, C, E>,
    init: CellInit<S>,
    private readonly deps: CellDeps,
  ) {
    this.state = init.state;
    this.version = init.version;
    this.snapshotVersion = init.snapshotVersion;
    this.leaseEpoch = init.leaseEpoch;
    this.token = init.leaseToken;
    this.persisted = init.persisted;
    this.lastActivityMs = deps.nowMs();
  }

  get currentState(): S {
    return this.state;
  }
  get currentVersion(): number {
    return this.version;
  }
  get leaseToken(): string {
    return this.token;
  }
  get isFenced(): boolean {
    return this.fenced;
  }
  /** False until the room's first batch with events inserted its row. */
  get isPersisted(): boolean {
    return this.persisted;
  }
  /** True while commands wait or a batch runs. */
  get busy(): boolean {
    return this.scheduled || this.queue.length > 0;
  }

  submit(command: C, requestId?: string, deadlineMs?: number): Promise<CommandResult> {
    if (this.fenced) return Promise.reject(fencedError());
    if (deadlineMs !== undefined && deadlineMs <= this.deps.nowMs()) {
      return Promise.reject(deadlineError());
    }
    this.lastActivityMs = this.deps.nowMs();
    return new Promise<CommandResult>((resolve, reject) => {
      this.queue.push({
        command,
        requestId: requestId ?? `auto:${randomUUID()}`,
        explicit: requestId !== undefined,
        deadlineMs,
        resolve,
        reject,
      });
      this.schedule();
    });
  }

  /** Runs `task` on the cell's lane, after the work queued before it. */
  onLane<T>(task: () => Promise<T>): Promise<T> {
    const run = this.lane.then(task);
    this.lane = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Replaces the lease token after a renewal (called on the lane). */
  setLeaseToken(token: string): void {
    this.token = token;
  }

  /** Stops the cell for good: queued commands fail with UNAVAILABLE. */
  fence(reason: string): void {
    if (this.fenced) return;
    this.fenced = true;
    this.deps.metrics.fenced.inc();
    this.deps.logger.warn({ reason }, 'cell fenced out');
    const queued = this.queue;
    this.queue = [];
    for (const p of queued) p.reject(fencedError());
    this.deps.onFenced(reason);
  }

  /** Writes a snapshot of the current state; false when fenced out. */
  async snapshot(): Promise<boolean> {
    if (this.fenced) return false;
    if (this.snapshotVersion === this.version) return true;
    const ok = await this.deps.store.saveSnapshot(
      this.key,
      this.leaseEpoch,
      this.version,
      JSON.stringify(this.state),
      this.deps.nowMs(),
    );
    if (ok) this.snapshotVersion = this.version;
    return ok;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void this.onLane(async () => {
      this.scheduled = false;
      const batch = this.queue.splice(0, this.deps.maxBatch);
      if (batch.length > 0) await this.runBatch(batch);
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async runBatch(batch: Pending<C>[]): Promise<void> {
    if (this.fenced) {
      for (const p of batch) p.reject(fencedError());
      return;
    }
    const started = performance.now();
    const nowMs = this.deps.nowMs();
    // One leader per request id; later copies in the same batch share its outcome.
    const leaders = new Map<string, Pending<C>[]>();
    for (const p of batch) {
      if (p.deadlineMs !== undefined && p.deadlineMs <= nowMs) {
        p.reject(deadlineError());
        continue;
      }
      const known = this.seen.get(p.requestId);
      if (known) settle([p], known, true);
      else leaders.set(p.requestId, [...(leaders.get(p.requestId) ?? []), p]);
    }
    let todo = [...leaders.values()];
    try {
      // Work inside the transaction (a wallet debit) must not even start for a request id
      // an earlier owner already decided: look those up first. Other batches rely on the
      // outcomes' unique key instead, which costs nothing when there is no retry.
      if (todo.some((group) => this.domain.inTransaction?.appliesTo(group[0]!.command))) {
        todo = await this.answerFromLog(todo);
      }
      // A unique violation means a request id of the batch is already logged (by an
      // earlier owner): answer those from the log and decide the rest again.
      for (let attempt = 0; todo.length > 0; attempt++) {
        const outcome = await this.commitOnce(todo.map((group) => group[0]!));
        if (outcome.kind === 'done') {
          this.deps.metrics.batchSize.observe(todo.length);
          this.deps.metrics.commitSeconds.observe((performance.now() - started) / 1000);
          for (const group of todo) {
            settle(group, outcome.results.get(group[0]!.requestId)!, false);
          }
          return;
        }
        if (outcome.kind === 'fenced' || attempt > 0) {
          this.fence(outcome.kind === 'fenced' ? outcome.reason : 'request id collision');
          for (const group of todo) for (const p of group) p.reject(fencedError());
          return;
        }
        const answered = await this.answerFromLog(todo);
        if (answered.length === todo.length) {
          this.fence('command log already holds this version');
          for (const group of todo) for (const p of group) p.reject(fencedError());
          return;
        }
        todo = answered;
      }
    } catch (error) {
      // Unknown outcome (e.g. the connection died at COMMIT): reload from SQL next time.
      this.deps.logger.error({ err: error }, 'commit failed');
      this.fence('commit failed');
      const failure = unavailable('COMMIT_FAILED', 'room commit failed, retry', error);
      for (const group of todo) for (const p of group) p.reject(failure);
    }
  }

  /** Answers the groups whose request id already has an outcome; returns the others. */
  private async answerFromLog(todo: Pending<C>[][]): Promise<Pending<C>[][]> {
    const explicit = todo.filter((group) => group[0]!.explicit);
    if (explicit.length === 0) return todo;
    const recorded = await this.deps.store.findResults(
      this.key,
      explicit.map((group) => group[0]!.requestId),
    );
    return todo.filter((group) => {
      const r = recorded.get(group[0]!.requestId);
      if (!r) return true;
      const outcome = parseOutcome(r.version, r.outcome);
      this.remember(group[0]!.requestId, outcome);
      settle(group, outcome, true);
      return false;
    });
  }

  private async commitOnce(
    leaders: Pending<C>[],
  ): Promise<
    | { kind: 'done'; results: Map<string, Outcome> }
    | { kind: 'fenced'; reason: string }
    | { kind: 'duplicate' }
  > {
    const nowMs = this.deps.nowMs();
    const results = new Map<string, Outcome>();
    let next: { state: S; version: number } | null = null;
    const outcome = await this.deps.store.commit(
      {
        key: this.key,
        nodeId: this.deps.nodeId,
        leaseEpoch: this.leaseEpoch,
        fromVersion: this.version,
        create: this.persisted ? null : { kind: this.domain.kind },
        leaseToken: () => this.token,
        verifyOwner: () => this.deps.verifyOwner(this.token),
        interactive: leaders.some((p) => this.domain.inTransaction?.appliesTo(p.command)),
        build: async (tx) => {
          results.clear();
          const decided = await this.decideAll(leaders, tx, nowMs, results);
          next = decided.entries.length > 0 ? decided : null;
          const outcomes = outcomeRows(leaders, results);
          // A room that has no row and gets no event stays unwritten: refusals and no-ops
          // of a creation that did not happen leave nothing behind.
          if (!next && (outcomes.length === 0 || !this.persisted)) return null;
          return this.batchWrite(decided, outcomes, nowMs);
        },
      },
      nowMs,
    );
    if (outcome.kind === 'fenced') return { kind: 'fenced', reason: outcome.reason };
    if (outcome.kind === 'duplicate_request') return { kind: 'duplicate' };
    if (next) {
      const committed: Decided<S, C, E> = next;
      this.state = committed.state;
      this.version = committed.version;
      this.persisted = true;
      if (outcome.write?.snapshot) this.snapshotVersion = outcome.write.snapshot.version;
      this.announce(committed, outcome.write?.outbox ?? []);
    }
    for (const p of leaders) {
      const r = results.get(p.requestId);
      if (r && p.explicit && recordable(r)) this.remember(p.requestId, r);
    }
    return { kind: 'done', results };
  }

  /** Decides the leaders in order against a working copy of the state. */
  private async decideAll(
    leaders: Pending<C>[],
    tx: BatchTransaction | null,
    nowMs: number,
    results: Map<string, Outcome>,
  ): Promise<Decided<S, C, E>> {
    const { domain } = this;
    let state = this.state;
    let version = this.version;
    const entries: ReplyingEntry<C, E>[] = [];
    for (const p of leaders) {
      const ctx = { key: this.key, nowMs, version: version + 1, requestId: p.requestId };
      let decision: Decision<E>;
      try {
        decision = domain.decide(state, p.command, ctx);
      } catch (error) {
        decision = internalError(error);
      }
      if (isDomainError(decision)) {
        results.set(p.requestId, { ok: false, error: decision, version });
        continue;
      }
      if (decision.length === 0) {
        const reply = domain.reply ? domain.reply(state, p.command, decision) : { version };
        results.set(p.requestId, { ok: true, result: { version, reply, duplicate: false } });
        continue;
      }
      const entry = {
        version: version + 1,
        requestId: p.requestId,
        command: p.command,
        events: decision,
      };
      const work = domain.inTransaction;
      if (work?.appliesTo(p.command)) {
        if (!tx) throw new Error('a transactional command reached the non-interactive path');
        const refused = await tx.attempt(() => work.apply(tx.trx, entry, this.key, nowMs));
        if (refused) {
          results.set(p.requestId, { ok: false, error: refused, version });
          continue;
        }
      }
      for (const event of decision) state = domain.evolve(state, event);
      version += 1;
      const reply = domain.reply ? domain.reply(state, p.command, decision) : { version };
      entries.push({ ...entry, reply });
      results.set(p.requestId, { ok: true, result: { version, reply, duplicate: false } });
    }
    const statements =
      entries.length > 0 && domain.project
        ? domain
            .project(this.deps.store.queries, this.key, state, entries, nowMs)
            .map((q) => q.compile())
        : [];
    return { state, version, entries, statements };
  }

  private batchWrite(
    decided: Decided<S, C, E>,
    outcomes: readonly OutcomeRow[],
    nowMs: number,
  ): BatchWrite {
    const log: LogRow[] = [];
    const outbox: OutboxRow[] = [];
    for (const entry of decided.entries) {
      const { command, requestId, version, events, reply } = entry;
      const { type, ...payload } = command;
      log.push({
        version,
        requestId,
        commandType: type,
        payload: JSON.stringify(payload),
        events: JSON.stringify(events),
        result: JSON.stringify({ reply }),
      });
      for (const event of events) {
        const out = this.domain.toOutbox
          ? this.domain.toOutbox(event)
          : { type: event.type, data: event };
        if (!out) continue;
        const eventId = randomUUID();
        outbox.push({
          eventId,
          roomVersion: version,
          eventType: out.type,
          envelope: JSON.stringify({
            app_code: this.key.appCode,
            event_id: eventId,
            room_id: this.key.roomId,
            room_version: version,
            type: out.type,
            occurred_at_ms: nowMs,
            data: out.data,
          }),
        });
      }
    }
    const dueSnapshot = decided.version - this.snapshotVersion >= this.deps.snapshotEvery;
    return {
      toVersion: decided.version,
      log,
      outbox,
      outcomes,
      nextAlarmMs: this.domain.nextDeadline(decided.state),
      snapshot: dueSnapshot
        ? { json: JSON.stringify(decided.state), version: decided.version }
        : null,
      statements: decided.statements,
    };
  }

  /** Tells the host's listener (the realtime bus) what just committed; never throws. */
  private announce(committed: Decided<S, C, E>, outbox: readonly OutboxRow[]): void {
    try {
      this.deps.onCommitted?.({
        key: this.key,
        kind: this.domain.kind,
        version: committed.version,
        entries: committed.entries,
        envelopes: outbox.map((o) => o.envelope),
      });
    } catch (err) {
      this.deps.logger.warn({ err }, 'commit listener failed');
    }
  }

  private remember(requestId: string, outcome: Outcome): void {
    if (this.seen.size >= SEEN_LIMIT) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(requestId, outcome);
  }
}

function settle(group: Pending<Command>[], outcome: Outcome, duplicate: boolean): void {
  for (const p of group) {
    if (outcome.ok) p.resolve(duplicate ? { ...outcome.result, duplicate } : outcome.result);
    else p.reject(AppError.from(outcome.error));
  }
}

/**
 * Whether an outcome is final for its request id. A domain refusal is; a fault of the
 * decider itself (`internal`) or of a dependency (`unavailable`) is not: the retry may
 * succeed.
 */
function recordable(outcome: Outcome): boolean {
  return outcome.ok || (outcome.error.kind !== 'internal' && outcome.error.kind !== 'unavailable');
}

/** The rows that make the batch's first answers final, for the request ids callers named. */
function outcomeRows(
  leaders: readonly Pending<Command>[],
  results: ReadonlyMap<string, Outcome>,
): OutcomeRow[] {
  const rows: OutcomeRow[] = [];
  for (const p of leaders) {
    const r = results.get(p.requestId);
    if (!r || !p.explicit || !recordable(r)) continue;
    rows.push({
      requestId: p.requestId,
      version: r.ok ? r.result.version : r.version,
      outcome: JSON.stringify(
        r.ok
          ? { reply: r.result.reply }
          : { error: { kind: r.error.kind, code: r.error.code, message: r.error.message } },
      ),
    });
  }
  return rows;
}

function parseOutcome(version: number, json: string): Outcome {
  const stored = JSON.parse(json) as { reply?: unknown; error?: DomainError };
  return stored.error
    ? { ok: false, error: stored.error, version }
    : { ok: true, result: { version, reply: stored.reply, duplicate: true } };
}

function deadlineError(): AppError {
  return unavailable('DEADLINE_EXCEEDED', 'the caller stopped waiting; nothing was done');
}

function fencedError(): AppError {
  return unavailable('CELL_FENCED', 'room moved to another node, retry');
}

function internalError(error: unknown): DomainError {
  return {
    kind: 'internal',
    code: 'DECIDE_FAILED',
    message: error instanceof Error ? error.message : String(error),
  };
}
