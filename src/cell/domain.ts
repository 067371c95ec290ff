/**
 * What a room kind plugs into the cell runtime. Everything here is pure except the two
 * optional transaction hooks, which run inside the cell's commit transaction.
 */
import type { Compilable, QueryCreator, Transaction } from 'kysely';
import type { DomainError } from '../shared/errors.js';
import type { Database } from '../adapters/sql/schema.js';
import type { CellKey } from './lease.js';

export interface Command {
  readonly type: string;
}
export interface DomainEvent {
  readonly type: string;
}

/** Everything impure a decider may need arrives here: time and identity. */
export interface DecideContext {
  readonly key: CellKey;
  readonly nowMs: number;
  /** The version this command will get if it produces events. */
  readonly version: number;
  /** Deterministic per command (the request id), usable to derive ids. */
  readonly requestId: string;
}

export type Decision<E> = readonly E[] | DomainError;

/** One command that produced events, as the commit hooks see it. */
export interface DecidedEntry<C extends Command, E extends DomainEvent> {
  readonly version: number;
  readonly requestId: string;
  readonly command: C;
  readonly events: readonly E[];
}

export interface CellDomain<S, C extends Command, E extends DomainEvent> {
  /** Stored in `room_cells.kind`. */
  readonly kind: string;
  initialState(key: CellKey): S;
  /** Pure: guard first, then the events; a DomainError changes nothing. */
  decide(state: S, command: C, ctx: DecideContext): Decision<E>;
  /** Pure and total: replaying the log through it rebuilds the state exactly. */
  evolve(state: S, event: E): S;
  /** The earliest deadline the state waits for (ms since epoch), or null. */
  nextDeadline(state: S): number | null;
  /** The system command that handles every deadline due at `nowMs`, or null. */
  alarmCommand(state: S, nowMs: number): C | null;
  /**
   * Whether a command may bring a new cell into existence. When false, a command or
   * query for a room that has no row fails with {@link CellDomain.notFound} and writes
   * nothing (no empty rows for made-up ids). Default: every command may.
   */
  creates?(command: C): boolean;
  /** The error for a room that does not exist; default `not_found` / `ROOM_NOT_FOUND`. */
  readonly notFound?: DomainError;
  /** What the caller receives (and the log records) for a command that committed. */
  reply?(state: S, command: C, events: readonly E[]): unknown;
  /**
   * Work that must run inside the commit transaction, under a savepoint, for the commands
   * it applies to (e.g. debit a wallet). Returning a DomainError undoes its writes and
   * fails that command only; the rest of the batch is decided without it. A batch with
   * none of these commands takes the faster non-interactive commit path.
   */
  inTransaction?: {
    appliesTo(command: C): boolean;
    apply(
      trx: Transaction<Database>,
      entry: DecidedEntry<C, E>,
      key: CellKey,
      nowMs: number,
    ): Promise<DomainError | null>;
  };
  /**
   * The domain's projection rows (e.g. `rooms`) for a batch, as queries built (not run)
   * with `db`; the store runs them in the commit transaction, after the log. `nowMs` is
   * the commit time (what `updated_at_ms` columns record).
   */
  project?(
    db: QueryCreator<Database>,
    key: CellKey,
    state: S,
    entries: readonly DecidedEntry<C, E>[],
    nowMs: number,
  ): readonly Compilable[];
  /** Which events leave through the outbox, and as what; default: every event as is. */
  toOutbox?(event: E): { type: string; data: unknown } | null;
}
