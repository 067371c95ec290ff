/**
 * Money columns (balances, prices) are BIGINT, and both drivers round a value past 2^53 − 1
 * once it becomes a JavaScript number (mysql2 hands it over as a string, better-sqlite3 as an
 * inexact number). The API never writes one (BALANCE_LIMIT, the catalog's price rule), but a
 * row written another way (an import, a manual fix) must never be answered rounded: amounts
 * are read as their decimal text, exactly, and one past the limit is refused.
 */
import { sql, type RawBuilder } from 'kysely';
import { refuse } from '../domain/errors.js';
import { AppError } from '../../shared/errors.js';

/** The column as its exact decimal text (CAST AS CHAR: TEXT affinity on SQLite). */
export function exactly(column: 'balance' | 'price'): RawBuilder<string> {
  return sql<string>`CAST(${sql.ref(column)} AS CHAR)`;
}

/** The amount `text` holds, or null when it is not an integer within ±(2^53 − 1). */
export function amountOf(text: string): number | null {
  if (!/^-?\d+$/.test(text)) return null;
  const amount = Number(text);
  // Past 2^53 − 1 the nearest number is at least 2^53: never a safe integer.
  return Number.isSafeInteger(amount) ? amount : null;
}

/** {@link amountOf}, or AMOUNT_NOT_EXACT (500) naming what was read. */
export function exactAmount(text: string, what: string): number {
  const amount = amountOf(text);
  if (amount === null) throw AppError.from(refuse('AMOUNT_NOT_EXACT', what));
  return amount;
}
