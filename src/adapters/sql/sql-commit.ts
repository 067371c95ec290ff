/**
 * Running a batch's statements in one transaction: the fence's row count decides between
 * COMMIT and ROLLBACK. On MySQL the whole batch goes in one packet.
 */
import type { CompiledQuery, ControlledTransaction } from 'kysely';
import { format, type SqlValue } from 'mysql2';
import type { Pool as PromisePool, ResultSetHeader } from 'mysql2/promise';
import type { BatchTransaction } from '../../cell/cell-store.js';
import type { DomainError } from '../../shared/errors.js';
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
 * MySQL: `START TRANSACTION; fence; log; outbox; projections` in one packet, then COMMIT
 * or ROLLBACK by the fence's row count: two round trips for the whole batch.
 */
export async function onePacket(
  pool: PromisePool,
  statements: readonly CompiledQuery[],
  write: SqlBatchWrite,
): Promise<SqlCommitOutcome> {
  // The pool under Kysely, used directly: its errors are translated here as Kysely's are.
  try {
    return await sendOnePacket(pool, statements, write);
  } catch (error) {
    throw translateDatabaseError(error);
  }
}

async function sendOnePacket(
  pool: PromisePool,
  statements: readonly CompiledQuery[],
  write: SqlBatchWrite,
): Promise<SqlCommitOutcome> {
  const conn = await pool.getConnection();
  let open = false;
  let broken = false;
  try {
    const text = [
      'START TRANSACTION',
      ...statements.map((s) => format(s.sql, s.parameters as SqlValue[])),
    ].join(';\n');
    open = true;
    const [results] = await conn.query<ResultSetHeader[]>(text);
    if (results[1]?.affectedRows !== 1) {
      await conn.query('ROLLBACK');
      open = false;
      return EPOCH_MOVED;
    }
    open = false; // a failed COMMIT has an unknown outcome: never roll back after it
    await conn.query('COMMIT');
    return { kind: 'committed', write };
  } catch (error) {
    if (open) await conn.query('ROLLBACK').catch(() => (broken = true));
    else broken = true;
    if (isUniqueViolation(error)) return { kind: 'duplicate_request' };
    throw error;
  } finally {
    if (broken) conn.destroy();
    else conn.release();
  }
}
