/**
 * What a room kind plugs into the cell runtime: its pure {@link RoomKind} (the decider and
 * its deadlines, replies and outbox mapping) plus two optional hooks that run inside the
 * commit transaction, typed by the store's {@link StoreTypes} and never opened here.
 */
import type { Command, DomainError, DomainEvent, RoomKind } from '../domain/decider.js';
import type { StoreTypes } from './cell-store.js';
import type { CellKey } from './lease.js';

export type { Command, Decision, DomainEvent } from '../domain/decider.js';

/** One command that produced events, as the commit hooks see it. */
export interface DecidedEntry<C extends Command, E extends DomainEvent> {
  readonly version: number;
  readonly requestId: string;
  readonly command: C;
  readonly events: readonly E[];
}

/**
 * What the in-transaction hook learnt that the pure reply cannot know (e.g. a balance after
 * a debit): its fields join the command's reply, so they are recorded in its outcome and a
 * retry answers them too.
 */
export interface TransactionReply {
  readonly reply: Readonly<Record<string, unknown>>;
}

export interface CellDomain<
  S,
  C extends Command,
  E extends DomainEvent,
  T extends StoreTypes = StoreTypes,
> extends RoomKind<S, C, E> {
  /**
   * Work that must run inside the commit transaction, under a savepoint, for the commands
   * it applies to (e.g. debit a wallet). Returning a DomainError undoes its writes and
   * fails that command only; the rest of the batch is decided without it. A batch with
   * none of these commands takes the faster non-interactive commit path. Returning a
   * {@link TransactionReply} applies the command and adds its fields to the reply.
   */
  inTransaction?: {
    appliesTo(command: C): boolean;
    apply(
      trx: T['tx'],
      entry: DecidedEntry<C, E>,
      key: CellKey,
      nowMs: number,
    ): Promise<DomainError | TransactionReply | null>;
  };
  /**
   * The domain's projection rows (e.g. `rooms`) for a batch, as statements built (not run)
   * with `queries`; the store runs them in the commit transaction, after the log. `nowMs`
   * is the commit time (what `updated_at_ms` columns record).
   */
  project?(
    queries: T['queries'],
    key: CellKey,
    state: S,
    entries: readonly DecidedEntry<C, E>[],
    nowMs: number,
  ): readonly T['statement'][];
}
