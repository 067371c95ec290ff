/**
 * One batch of a cell, decided: the commands in order against a working copy of the state,
 * each with its outcome, and the rows that make them durable (command log, outcomes,
 * outbox, snapshot, the domain's projections). No I/O here but the in-transaction hook.
 */
import { randomUUID } from 'node:crypto';
import { isDomainError, type DomainError } from '../domain/decider.js';
import type {
  BatchTransaction,
  BatchWrite,
  LogRow,
  OutboxRow,
  OutcomeRow,
  ReactionRow,
  StoreTypes,
} from './cell-store.js';
import type { CellDomain, Command, DecidedEntry, Decision, DomainEvent } from './domain.js';
import { roomEventEnvelope, type RoomEventEnvelope } from './envelope.js';
import type { CellKey } from './lease.js';
import { errors } from '../shared/error-codes.js';

/** What a caller gets back for a command that took effect (now or on an earlier try). */
export interface CommandResult {
  /** The room version after the command (unchanged for a no-op). */
  readonly version: number;
  readonly reply: unknown;
  /** True when the request id was already decided and this is the recorded answer. */
  readonly duplicate: boolean;
}

/** A command's first decided outcome: final for its request id. */
export type Outcome =
  | { readonly ok: true; readonly result: CommandResult }
  /** `version`: the room version the refusal was decided at. */
  | { readonly ok: false; readonly error: DomainError; readonly version: number };

/** A queued command as the batch sees it. */
export interface BatchCommand<C> {
  readonly command: C;
  readonly requestId: string;
  /** The caller named the request id (a retry may come): its outcome is recorded. */
  readonly explicit: boolean;
  /** What the request id names (./request-fingerprint.ts): recorded with its outcome. */
  readonly fingerprint: string;
}

/** A request id's first outcome, and what that request was (null: recorded before fingerprints). */
export interface RecordedOutcome {
  readonly outcome: Outcome;
  readonly fingerprint: string | null;
}

export type ReplyingEntry<C extends Command, E extends DomainEvent> = DecidedEntry<C, E> & {
  readonly reply: unknown;
};

export interface DecidedBatch<S, C extends Command, E extends DomainEvent, P> {
  readonly state: S;
  readonly version: number;
  readonly entries: readonly ReplyingEntry<C, E>[];
  readonly outcomes: ReadonlyMap<string, Outcome>;
  readonly statements: readonly P[];
}

/** Decides `commands` in order from (state, version); runs the in-transaction hook. */
export async function decideBatch<
  S,
  C extends Command,
  E extends DomainEvent,
  T extends StoreTypes,
>(
  domain: CellDomain<S, C, E, T>,
  key: CellKey,
  from: { readonly state: S; readonly version: number },
  commands: readonly BatchCommand<C>[],
  tx: BatchTransaction<T['tx']> | null,
  queries: T['queries'],
  nowMs: number,
): Promise<DecidedBatch<S, C, E, T['statement']>> {
  let { state, version } = from;
  const entries: ReplyingEntry<C, E>[] = [];
  const outcomes = new Map<string, Outcome>();
  for (const p of commands) {
    const ctx = { key, nowMs, version: version + 1, requestId: p.requestId };
    let decision: Decision<E>;
    try {
      decision = domain.decide(state, p.command, ctx);
    } catch (error) {
      decision = internalError(error);
    }
    if (isDomainError(decision)) {
      outcomes.set(p.requestId, { ok: false, error: decision, version });
      continue;
    }
    if (decision.length === 0) {
      const reply = domain.reply ? domain.reply(state, p.command, decision) : { version };
      outcomes.set(p.requestId, { ok: true, result: { version, reply, duplicate: false } });
      continue;
    }
    const entry = {
      version: version + 1,
      requestId: p.requestId,
      command: p.command,
      events: decision,
    };
    const work = domain.inTransaction;
    let learnt: Readonly<Record<string, unknown>> | null = null;
    if (work?.appliesTo(p.command)) {
      if (!tx) throw new Error('a transactional command reached the non-interactive path');
      const refused = await tx.attempt(async () => {
        const done = await work.apply(tx.trx, entry, key, nowMs);
        if (done === null || !('reply' in done)) return done;
        learnt = done.reply;
        return null;
      });
      if (refused) {
        outcomes.set(p.requestId, { ok: false, error: refused, version });
        continue;
      }
    }
    for (const event of decision) state = domain.evolve(state, event);
    version += 1;
    const decided = domain.reply ? domain.reply(state, p.command, decision) : { version };
    const reply = learnt ? { ...(decided as object), ...(learnt as object) } : decided;
    entries.push({ ...entry, reply });
    outcomes.set(p.requestId, { ok: true, result: { version, reply, duplicate: false } });
  }
  const statements =
    entries.length > 0 && domain.project ? domain.project(queries, key, state, entries, nowMs) : [];
  return { state, version, entries, outcomes, statements };
}

/**
 * Whether an outcome is final for its request id. A domain refusal is; a fault of the
 * decider itself (`internal`) or of a dependency (`unavailable`) is not: the retry may
 * succeed.
 */
export function recordable(outcome: Outcome): boolean {
  return outcome.ok || (outcome.error.kind !== 'internal' && outcome.error.kind !== 'unavailable');
}

/** The rows that make the batch's first answers final, for the request ids callers named. */
export function outcomeRows(
  commands: readonly BatchCommand<unknown>[],
  outcomes: ReadonlyMap<string, Outcome>,
): OutcomeRow[] {
  const rows: OutcomeRow[] = [];
  for (const p of commands) {
    const r = outcomes.get(p.requestId);
    if (!r || !p.explicit || !recordable(r)) continue;
    const fp = p.fingerprint;
    rows.push({
      requestId: p.requestId,
      version: r.ok ? r.result.version : r.version,
      outcome: JSON.stringify(
        r.ok
          ? { fp, reply: r.result.reply }
          : { fp, error: { kind: r.error.kind, code: r.error.code, message: r.error.message } },
      ),
    });
  }
  return rows;
}

/** A row of `room_request_outcomes` read back: its outcome, and the request it answered. */
export function parseOutcome(version: number, json: string): RecordedOutcome {
  const stored = JSON.parse(json) as { fp?: string; reply?: unknown; error?: DomainError };
  return {
    outcome: stored.error
      ? { ok: false, error: stored.error, version }
      : { ok: true, result: { version, reply: stored.reply, duplicate: true } },
    fingerprint: stored.fp ?? null,
  };
}

/**
 * Whether `fingerprint` is the request a recorded outcome answered. Outcomes recorded
 * before fingerprints were kept answer any copy, as they always did.
 */
export function sameRequest(recorded: RecordedOutcome, fingerprint: string): boolean {
  return recorded.fingerprint === null || recorded.fingerprint === fingerprint;
}

/** The rows of a decided batch, and its envelopes (for the outbox and the realtime bus). */
export function batchWrite<S, C extends Command, E extends DomainEvent, P>(
  domain: CellDomain<S, C, E, StoreTypes>,
  key: CellKey,
  decided: DecidedBatch<S, C, E, P>,
  outcomes: readonly OutcomeRow[],
  snapshotDue: boolean,
  nowMs: number,
): { write: BatchWrite<P>; envelopes: RoomEventEnvelope[] } {
  const log: LogRow[] = [];
  const outbox: OutboxRow[] = [];
  const reactions: ReactionRow[] = [];
  // The same reaction twice in a batch (a room closing releases every seat) is one.
  const reacted = new Set<string>();
  const envelopes: RoomEventEnvelope[] = [];
  for (const { command, requestId, version, events, reply } of decided.entries) {
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
      for (const reaction of domain.reactionsTo?.(event) ?? []) {
        const data = JSON.stringify(reaction.data);
        if (reacted.has(`${reaction.type}\n${data}`)) continue;
        reacted.add(`${reaction.type}\n${data}`);
        reactions.push({
          reactionId: randomUUID(),
          roomVersion: version,
          type: reaction.type,
          data,
        });
      }
      const out = domain.toOutbox ? domain.toOutbox(event) : { type: event.type, data: event };
      if (!out) continue;
      const envelope = roomEventEnvelope(key, randomUUID(), version, out, nowMs);
      envelopes.push(envelope);
      outbox.push({
        eventId: envelope.event_id,
        roomVersion: version,
        eventType: out.type,
        envelope: JSON.stringify(envelope),
      });
    }
  }
  return {
    write: {
      toVersion: decided.version,
      log,
      outbox,
      reactions,
      outcomes,
      nextAlarmMs: domain.nextDeadline(decided.state),
      snapshot: snapshotDue
        ? { json: JSON.stringify(decided.state), version: decided.version }
        : null,
      statements: decided.statements,
    },
    envelopes,
  };
}

function internalError(error: unknown): DomainError {
  const { kind, code, message } = errors.DECIDE_FAILED(
    error instanceof Error ? error.message : String(error),
  );
  return { kind, code, message };
}
