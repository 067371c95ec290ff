/**
 * A small test-only room kind that exercises every hook of the runtime without any real
 * domain: a counter with alarms, and (when the test made its tables) charges written
 * inside the commit transaction against a shared limit, like a wallet.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../adapters/sql/schema.js';
import type { SqlStoreTypes } from '../../adapters/sql/sql-store-types.js';
import type { CellDomain } from '../domain.js';
import { domainError, type DomainError } from '../../shared/errors.js';

export interface CounterState {
  readonly count: number;
  /** Pending alarm deadlines, ascending. */
  readonly alarms: readonly number[];
  /** Deadlines that fired, in firing order (a deadline twice here is a bug). */
  readonly fired: readonly number[];
}

export type CounterCommand =
  | { readonly type: 'Add'; readonly amount: number }
  | { readonly type: 'Schedule'; readonly atMs: number }
  | { readonly type: 'FireAlarms' }
  | { readonly type: 'Charge'; readonly account: string; readonly amount: number };

export type CounterEvent =
  | { readonly type: 'Added'; readonly amount: number }
  | { readonly type: 'Scheduled'; readonly atMs: number }
  | { readonly type: 'AlarmFired'; readonly atMs: number; readonly firedAtMs: number }
  | { readonly type: 'Charged'; readonly account: string; readonly amount: number };

export interface CounterOptions {
  /** Use the `counter_charges` / `counter_limits` tables made by {@link counterTablesSql}. */
  readonly charges?: boolean;
}

/** DDL for the charge tables (portable across SQLite and MariaDB). */
export const counterTablesSql = [
  'create table counter_charges (request_id varchar(128) primary key, account varchar(64) not null, amount integer not null)',
  'create table counter_limits (account varchar(64) primary key, max_total integer not null)',
];

export function counterDomain(
  options: CounterOptions = {},
): CellDomain<CounterState, CounterCommand, CounterEvent, SqlStoreTypes> {
  return {
    kind: 'counter',
    initialState: () => ({ count: 0, alarms: [], fired: [] }),
    decide(state, command, ctx) {
      switch (command.type) {
        case 'Add':
          if (!Number.isInteger(command.amount)) {
            return domainError('validation', 'BAD_AMOUNT', 'amount must be an integer');
          }
          if (state.count + command.amount < 0) {
            return domainError('illegal_state', 'BELOW_ZERO', 'count cannot go below zero');
          }
          return command.amount === 0 ? [] : [{ type: 'Added', amount: command.amount }];
        case 'Schedule':
          return [{ type: 'Scheduled', atMs: command.atMs }];
        case 'FireAlarms':
          return state.alarms
            .filter((at) => at <= ctx.nowMs)
            .map((atMs) => ({ type: 'AlarmFired', atMs, firedAtMs: ctx.nowMs }));
        case 'Charge':
          return [{ type: 'Charged', account: command.account, amount: command.amount }];
        default:
          return assertNever(command);
      }
    },
    evolve(state, event) {
      switch (event.type) {
        case 'Added':
          return { ...state, count: state.count + event.amount };
        case 'Scheduled':
          return { ...state, alarms: [...state.alarms, event.atMs].sort((a, b) => a - b) };
        case 'AlarmFired':
          return {
            ...state,
            alarms: state.alarms.filter((at) => at !== event.atMs),
            fired: [...state.fired, event.atMs],
          };
        case 'Charged':
          return { ...state, count: state.count + event.amount };
        default:
          return assertNever(event);
      }
    },
    nextDeadline: (state) => state.alarms[0] ?? null,
    alarmCommand: (state, nowMs) =>
      (state.alarms[0] ?? Infinity) <= nowMs ? { type: 'FireAlarms' } : null,
    reply: (state) => ({ count: state.count }),
    ...(options.charges
      ? { inTransaction: { appliesTo: (c) => c.type === 'Charge', apply: chargeInTransaction } }
      : {}),
  };
}

async function chargeInTransaction(
  trx: Transaction<Database>,
  entry: { requestId: string; command: CounterCommand },
): Promise<DomainError | null> {
  const { command } = entry;
  if (command.type !== 'Charge') return null;
  await sql`insert into counter_charges (request_id, account, amount) values (${entry.requestId}, ${command.account}, ${command.amount})`.execute(
    trx,
  );
  const { rows } = await sql<{ total: number | string; max_total: number | null }>`
    select (select sum(amount) from counter_charges where account = ${command.account}) as total,
           (select max_total from counter_limits where account = ${command.account}) as max_total`.execute(
    trx,
  );
  const row = rows[0];
  if (row?.max_total != null && Number(row.total) > row.max_total) {
    return domainError(
      'illegal_state',
      'LIMIT_EXCEEDED',
      `account ${command.account} over its limit`,
    );
  }
  return null;
}

function assertNever(value: never): never {
  throw new Error(`unhandled: ${JSON.stringify(value)}`);
}
