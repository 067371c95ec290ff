/**
 * What a room kind is, as pure code: a decider with no imports. `decide` turns a command
 * into events or a refusal, `evolve` folds an event into the state; time, ids and the room
 * arrive in the context, so replaying the log rebuilds the state exactly. The cell runtime
 * executes any {@link RoomKind}; the domains (src/domain/<kind>/) import only this file.
 */

/** Identifies one room of one app. */
export interface RoomKey {
  readonly appCode: string;
  readonly roomId: string;
}

/** The project's one error taxonomy; each protocol edge maps it in one place. */
export type ErrorKind =
  | 'unauthenticated'
  | 'validation'
  | 'not_found'
  | 'forbidden'
  | 'illegal_state'
  | 'conflict'
  | 'unavailable'
  /** Too many requests of one caller: try again later (REST 429 + Retry-After). */
  | 'rate_limited'
  | 'internal';

/** A plain, serialisable error value: what a decider returns instead of events. */
export interface DomainError {
  readonly kind: ErrorKind;
  /** Stable machine-readable reason, e.g. `ROOM_CLOSED`. */
  readonly code: string;
  /** Human-readable text; the seed's exact message where it defines one. */
  readonly message: string;
}

export function domainError(kind: ErrorKind, code: string, message: string): DomainError {
  return { kind, code, message };
}

/**
 * Bad input, the one refusal every layer answers with the same code: defined here, once,
 * because a domain may import nothing else (src/shared/error-codes.ts takes it from here).
 * The message is which rule failed.
 */
export const INVALID_ARGUMENT = ['validation', '%s'] as const satisfies readonly [
  ErrorKind,
  string,
];

export function invalidArgument(message: string): DomainError {
  return domainError(INVALID_ARGUMENT[0], 'INVALID_ARGUMENT', message);
}

export function isDomainError(value: unknown): value is DomainError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as DomainError).kind === 'string' &&
    typeof (value as DomainError).code === 'string' &&
    typeof (value as DomainError).message === 'string'
  );
}

export interface Command {
  readonly type: string;
}
export interface DomainEvent {
  readonly type: string;
}

/** Everything impure a decider may need arrives here: time and identity. */
export interface DecideContext {
  readonly key: RoomKey;
  readonly nowMs: number;
  /** The version this command will get if it produces events. */
  readonly version: number;
  /** Deterministic per command (the request id), usable to derive ids. */
  readonly requestId: string;
}

/** The events of a command (none: a no-op), or why it is refused (nothing changes). */
export type Decision<E> = readonly E[] | DomainError;

export interface Decider<S, C extends Command, E extends DomainEvent> {
  initialState(key: RoomKey): S;
  /** Pure: guard first, then the events; a DomainError changes nothing. */
  decide(state: S, command: C, ctx: DecideContext): Decision<E>;
  /** Pure and total: replaying the log through it rebuilds the state exactly. */
  evolve(state: S, event: E): S;
}

/** A decider with what the runtime asks of a room kind besides it; all of it pure. */
export interface RoomKind<S, C extends Command, E extends DomainEvent> extends Decider<S, C, E> {
  /** Stored in `room_cells.kind`. */
  readonly kind: string;
  /** The earliest deadline the state waits for (ms since epoch), or null. */
  nextDeadline(state: S): number | null;
  /** The system command that handles every deadline due at `nowMs`, or null. */
  alarmCommand(state: S, nowMs: number): C | null;
  /**
   * Whether a command may bring a new room into existence. When false, a command or query
   * for a room that does not exist fails with {@link RoomKind.notFound} and writes nothing.
   * Default: every command may.
   */
  creates?(command: C): boolean;
  /** The error for a room that does not exist; default `not_found` / `ROOM_NOT_FOUND`. */
  readonly notFound?: DomainError;
  /**
   * The state a stored snapshot holds, from its parsed JSON: where a kind's state changed
   * shape, this reads the snapshots written before. Default: the parsed value as it is.
   */
  fromSnapshot?(stored: unknown): S;
  /** What the caller receives (and every retry gets again) for a command that committed. */
  reply?(state: S, command: C, events: readonly E[]): unknown;
  /** Which events leave through the outbox, and as what; default: every event as is. */
  toOutbox?(event: E): { type: string; data: unknown } | null;
  /**
   * What must happen outside the database because `event` committed (close a member's
   * media, close a router, tell members to re-create their media): recorded in the commit's
   * transaction and carried out at least once, by any node, until done. Default: nothing.
   */
  reactionsTo?(event: E): readonly Reaction[];
}

/** A post-commit reaction: its type names the handler; `data` is all the handler gets. */
export interface Reaction {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}
