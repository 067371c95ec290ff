/**
 * The two SQL backends differ in a few column types and error codes; those differences
 * live here and nowhere else.
 */
import { sql, type ColumnDataType, type Expression } from 'kysely';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';

type DataTypeExpression = ColumnDataType | Expression<unknown>;

export type SqlFlavor = 'sqlite' | 'mysql';

/** 64-bit integer column (SQLite's `integer` is 64-bit and the only auto-increment type). */
export function bigint(flavor: SqlFlavor): DataTypeExpression {
  return flavor === 'sqlite' ? 'integer' : 'bigint';
}

/** An identifier column: compared byte for byte (MySQL's default collations ignore case). */
export function idType(flavor: SqlFlavor, length: number): DataTypeExpression {
  return flavor === 'sqlite'
    ? sql.raw(`varchar(${length})`)
    : sql.raw(`varchar(${length}) character set utf8mb4 collate utf8mb4_bin`);
}

/** A JSON document column: MySQL's `text` stops at 64 KiB, too small for snapshots. */
export function jsonText(flavor: SqlFlavor): DataTypeExpression {
  return flavor === 'sqlite' ? 'text' : sql`mediumtext`;
}

/** True when the error is a unique or primary key violation on either backend. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown } | null;
  if (!e) return false;
  return (
    e.code === 'ER_DUP_ENTRY' ||
    e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    e.code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}

/**
 * Driver errors that say the database, not the statement, failed: the server cannot be
 * reached, the connection dropped or timed out, the server is shutting down or refuses
 * connections. Errors of this kind come and go with the server; retrying later can succeed.
 */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_CLIENT_INTERACTION_TIMEOUT',
  'ER_NET_READ_ERROR',
  'ER_NET_READ_INTERRUPTED',
  'ER_NET_ERROR_ON_WRITE',
  'ER_NET_WRITE_INTERRUPTED',
]);

/**
 * Lock conflicts: the database chose this transaction as a deadlock victim or gave up its
 * lock wait. The transaction wrote nothing that will commit (every caller rolls back on a
 * throw), so running it again is safe. A NOWAIT locking read of a locked row fails the same
 * way (MariaDB says ER_LOCK_WAIT_TIMEOUT, MySQL 8 ER_LOCK_NOWAIT).
 */
const LOCK_CONFLICT = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_NOWAIT']);

/** What a failed database call means to its caller, when it is not about the statement. */
export type DatabaseFault = 'unreachable' | 'lock_conflict';

export function databaseFaultOf(error: unknown): DatabaseFault | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, fatal, message } = error as { code?: unknown; fatal?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (LOCK_CONFLICT.has(code)) return 'lock_conflict';
    // better-sqlite3: another process holds the file past busy_timeout (BUSY_SNAPSHOT, …).
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'lock_conflict';
    if (UNREACHABLE.has(code)) return 'unreachable';
  }
  // mysql2 marks every error that broke its connection `fatal`, and names its closed pool.
  if (fatal === true || message === 'Pool is closed.') return 'unreachable';
  return null;
}

/**
 * The one translation of driver errors into the taxonomy: a database that cannot be reached
 * becomes `DATABASE_UNAVAILABLE`, a lock conflict `DATABASE_LOCK_CONFLICT` (both
 * `unavailable`: retry with the same request id); anything else is returned as it is (a
 * unique violation is the caller's to read). The driver's error is kept as the cause, for
 * the log only: its text names hosts and ports.
 */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  switch (databaseFaultOf(error)) {
    case 'unreachable':
      return errors.DATABASE_UNAVAILABLE.withCause(error);
    case 'lock_conflict':
      return errors.DATABASE_LOCK_CONFLICT.withCause(error);
    default:
      return error;
  }
}

/**
 * True when the database rolled the transaction back on a lock conflict (a deadlock victim
 * or a lost lock wait), whether the driver's error or its translation reaches the caller.
 */
export function isLockConflict(error: unknown): boolean {
  if (error instanceof AppError) return error.code === 'DATABASE_LOCK_CONFLICT';
  return databaseFaultOf(error) === 'lock_conflict';
}
