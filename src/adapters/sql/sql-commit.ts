/**
 * Running a batch's statements in one transaction: the fence's row count decides between
 * COMMIT and ROLLBACK. On MySQL the whole batch goes in one packet.
 */
import type { CompiledQuery, ControlledTransaction } from 'kysely';
import { escape, escapeId, format, type SqlValue } from 'mysql2';
import type { Pool as PromisePool } from 'mysql2/promise';
import type { BatchTransaction } from '../../cell/cell-store.js';
import type { DomainError } from '../../shared/errors.js';
import type { BatchStatements, RowsInsert } from './batch-statements.js';
import { isUniqueViolation, translateDatabaseError } from './flavor.js';
import type { Database } from './schema.js';
import type { SqlBatchWrite, SqlCommitOutcome } from './sql-store-types.js';

export const LEASE_LOST: SqlCommitOutcome = {
  kind: 'fenced',
  reason: 'lease token no longer current',
};
export const EPOCH_MOVED: SqlCommitOutcome = {
  kind: 'fenced',
  reason: 'lease_epoch or version moved',
};

export function batchTransaction(
  trx: ControlledTransaction<Database>,
): BatchTransaction<ControlledTransaction<Database>> {
  let n = 0;
  return {
    trx,
    async attempt(fn: () => Promise<DomainError | null>): Promise<DomainError | null> {
      const name = `cmd${++n}`;
      const inner = await trx.savepoint(name).execute();
      const error = await fn();
      if (error) await inner.rollbackToSavepoint(name).execute();
      else await inner.releaseSavepoint(name).execute();
      return error;
    },
  };
}

/** Runs the statements in an open transaction and commits, or rolls back when fenced. */
export async function applyWrite(
  trx: ControlledTransaction<Database>,
  statements: readonly CompiledQuery[],
  write: SqlBatchWrite,
): Promise<SqlCommitOutcome> {
  try {
    const [fence, ...rest] = statements;
    const fenced = await trx.executeQuery(fence!);
    if (Number(fenced.numAffectedRows ?? 0) !== 1) {
      await trx.rollback().execute();
      return EPOCH_MOVED;
    }
    for (const statement of rest) await trx.executeQuery(statement);
  } catch (error) {
    await trx
      .rollback()
      .execute()
      .catch(() => undefined);
    if (isUniqueViolation(error)) return { kind: 'duplicate_request' };
    throw error;
  }
  try {
    await trx.commit().execute();
  } catch (error) {
    // A COMMIT that failed leaves the connection held, and on SQLite a BUSY one leaves the
    // transaction open: end both (what a COMMIT did take effect a ROLLBACK cannot undo).
    await trx
      .rollback()
      .execute()
      .catch(() => undefined);
    throw error;
  }
  return { kind: 'committed', write };
}

/**
 * MySQL: `START TRANSACTION; fence; check; snapshot; log; outcomes; outbox; projections; COMMIT` in
 * one packet: one round trip for the whole batch. The check after the fence fails the
 * packet when the fence matched no row (the epoch or version moved), so nothing after it
 * runs and the transaction is rolled back; so does any other error on the way.
 */
export async function onePacket(
  pool: PromisePool,
  statements: BatchStatements,
  write: SqlBatchWrite,
  sent?: () => void,
): Promise<SqlCommitOutcome> {
  // The pool under Kysely, used directly: its errors are translated here as Kysely's are.
  try {
    return await sendOnePacket(pool, statements, write, sent);
  } catch (error) {
    throw translateDatabaseError(error);
  }
}

/**
 * Raises ER_SUBQUERY_NO_1_ROW unless the statement before it touched exactly one row: a
 * failing statement is the one way to stop a multi-statement packet part way.
 */
const FENCE_HELD = 'SELECT IF(ROW_COUNT() = 1, 1, (SELECT 1 UNION ALL SELECT 2))';
const FENCE_MOVED_ERRNO = 1242;

async function sendOnePacket(
  pool: PromisePool,
  statements: BatchStatements,
  write: SqlBatchWrite,
  sent: (() => void) | undefined,
): Promise<SqlCommitOutcome> {
  const conn = await pool.getConnection();
  let broken = false;
  try {
    const text = [
      'START TRANSACTION',
      formatted(statements.fence),
      FENCE_HELD,
      ...(statements.snapshot ? [formatted(statements.snapshot)] : []),
      ...statements.inserts.map(insertText),
      ...statements.projections.map(formatted),
      'COMMIT',
    ].join(';\n');
    // The packet is written to the socket inside query(): the next batch may follow it.
    const answered = conn.query(text);
    sent?.();
    await answered;
    return { kind: 'committed', write };
  } catch (error) {
    // Stopped before COMMIT (the fence, a duplicate, a lock conflict): roll back what ran.
    // A connection that broke may have committed or not: it is dropped, the error thrown,
    // and the cell reloads from the database.
    await conn.query('ROLLBACK').catch(() => (broken = true));
    if ((error as { errno?: unknown }).errno === FENCE_MOVED_ERRNO) return EPOCH_MOVED;
    if (isUniqueViolation(error)) return { kind: 'duplicate_request' };
    throw error;
  } finally {
    if (broken) conn.destroy();
    else conn.release();
  }
}

/**
 * Inside a quoted literal only a quote, a backslash (and, kept escaped, NUL and Ctrl-Z)
 * mean anything to the server: a string without them is quoted as it is. mysql2's
 * `escape` also escapes `"`, which puts every JSON value on its slow path: about half of
 * the time to write a batch's text (bench/PROFILES.md).
 */
// eslint-disable-next-line no-control-regex -- NUL and Ctrl-Z are what it looks for
const NEEDS_ESCAPE = /[\0\x1a'\\]/;

function literal(value: SqlValue): string {
  return typeof value === 'string' && !NEEDS_ESCAPE.test(value) ? `'${value}'` : escape(value);
}

function formatted(query: CompiledQuery): string {
  return format(query.sql, query.parameters as SqlValue[]);
}

/**
 * `INSERT INTO t (columns) VALUES (…), (…)`, every value escaped by mysql2 as its `format`
 * would (strings quoted and escaped, numbers as written, null as NULL); the table and
 * column names are the runtime's own, quoted all the same.
 */
function insertText(insert: RowsInsert): string {
  const rows = insert.rows as readonly Record<string, SqlValue>[];
  const columns = Object.keys(rows[0]!);
  const values = rows.map((row) => `(${columns.map((c) => literal(row[c])).join(',')})`);
  return `INSERT INTO ${escapeId(insert.table)} (${columns.map((c) => escapeId(c)).join(',')}) VALUES ${values.join(',')}`;
}
