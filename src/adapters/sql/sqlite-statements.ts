/**
 * better-sqlite3 behind Kysely with its prepared statements kept: Kysely prepares every
 * query it runs, and compiling the same SQL text again is most of what a short statement
 * costs. Statements are reused by their text (values are always bound, never inlined, so
 * the texts are few); the least recently used go first beyond `capacity`.
 */
import type { SqliteDatabase, SqliteStatement } from 'kysely';

export const STATEMENT_CACHE_CAPACITY = 500;

export function withStatementCache(
  database: SqliteDatabase,
  capacity = STATEMENT_CACHE_CAPACITY,
): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare(sql: string): SqliteStatement {
      const kept = statements.get(sql);
      if (kept) {
        // Most recent last: the Map's first key is the one to evict.
        statements.delete(sql);
        statements.set(sql, kept);
        return kept;
      }
      const prepared = database.prepare(sql);
      statements.set(sql, prepared);
      if (statements.size > capacity) statements.delete(statements.keys().next().value!);
      return prepared;
    },
  };
}
