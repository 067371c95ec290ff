/**
 * The two SQL backends differ in a few column types and error codes; those differences
 * live here and nowhere else.
 */
import { sql, type ColumnDataType, type Expression } from 'kysely';

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

/** True when MySQL rolled the transaction back to break a deadlock (SQLite has none). */
export function isDeadlock(error: unknown): boolean {
  const e = error as { code?: unknown } | null;
  return e?.code === 'ER_LOCK_DEADLOCK';
}
