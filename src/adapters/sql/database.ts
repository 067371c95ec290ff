/**
 * Opens the SQL backend named by a URL: `mysql://…` for the cluster, a file path or
 * `sqlite:…` for the embedded default. Migrations run here so every node starts on the
 * current schema (Kysely's migrator locks, so concurrent starts are safe).
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, MysqlDialect, SqliteDialect, type Migration } from 'kysely';
import { createPool, format, type Pool, type SqlValue } from 'mysql2';
import { translatingErrors } from './fault-dialect.js';
import type { SqlFlavor } from './flavor.js';
import { checkpointOffLoop, type Checkpointer } from './sqlite-checkpointer.js';
import { withStatementCache } from './sqlite-statements.js';
import { roomCellRuntime } from './migrations/0001_room_cell_runtime.js';
import { webhookTables } from './migrations/0002_webhooks.js';
import { accountTables } from './migrations/0003_accounts.js';
import { voiceRoomTables } from './migrations/0004_voice_rooms.js';
import { requestOutcomeTables } from './migrations/0005_request_outcomes.js';
import { requestOutcomeCreatedIndex } from './migrations/0013_request_outcome_created_index.js';
import { roomOutboxPruned } from './migrations/0014_room_outbox_pruned.js';
import { roomReactionTables } from './migrations/0015_room_reactions.js';
import { webhookCrowdEvents } from './migrations/0016_webhook_crowd_events.js';
import { roomSnapshots } from './migrations/0017_room_snapshots.js';
import { voiceChatRankings } from './migrations/0018_voice_chat_rankings.js';
import { userNicknameIndex } from './migrations/0019_user_nickname_index.js';
import { roomOwnerIndex } from './migrations/0006_room_owner_index.js';
import { meetingTables } from './migrations/0007_meetings.js';
import { notificationTables } from './migrations/0008_notifications.js';
import { meetingEndedIndex } from './migrations/0009_meeting_ended_index.js';
import { notificationCreatedIndex } from './migrations/0010_notification_created_index.js';
import { notificationRequestKeys } from './migrations/0011_notification_request_keys.js';
import { roomCellConnection } from './migrations/0012_room_cell_connection.js';
import type { Database } from './schema.js';

export interface SqlBackend {
  readonly db: Kysely<Database>;
  readonly flavor: SqlFlavor;
  /** The MySQL pool under `db` (for one-round-trip batch commits); null on SQLite. */
  readonly mysqlPool: Pool | null;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** MySQL connection pool size. */
  poolSize?: number;
}

export function sqlFlavorOf(url: string): SqlFlavor {
  return /^mysql:\/\//i.test(url) ? 'mysql' : 'sqlite';
}

export async function openSqlBackend(url: string, options: OpenOptions = {}): Promise<SqlBackend> {
  const flavor = sqlFlavorOf(url);
  const mysqlPool = flavor === 'mysql' ? createMysqlPool(url, options) : null;
  const checkpointers: Checkpointer[] = [];
  const db = new Kysely<Database>({
    // Every query's driver errors become the taxonomy's (an outage is `unavailable`).
    dialect: translatingErrors(
      mysqlPool ? new MysqlDialect({ pool: mysqlPool }) : sqliteDialect(url, checkpointers),
    ),
  });
  let closed: Promise<void> | undefined;
  const backend: SqlBackend = {
    db,
    flavor,
    mysqlPool,
    // The checkpointer's connection closes last: it checkpoints what is left and removes the WAL.
    close: () =>
      (closed ??= db.destroy().then(async () => {
        for (const c of checkpointers) await c.close();
      })),
  };
  try {
    await migrateToLatest(db, flavor);
  } catch (error) {
    await backend.close();
    throw error;
  }
  return backend;
}

/**
 * Every value this pool sends is escaped with backslashes (mysql2's `escape`). On a server
 * whose `sql_mode` has NO_BACKSLASH_ESCAPES a backslash is an ordinary character, and a
 * value with `\'` in it would end its string early: each connection takes that mode out of
 * its session before its first query.
 */
const BACKSLASH_ESCAPES = `SET SESSION sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',NO_BACKSLASH_ESCAPES,', ','))`;

function createMysqlPool(url: string, options: OpenOptions): Pool {
  const pool = createPool({
    uri: url,
    connectionLimit: options.poolSize ?? 10,
    // Versions and times are BIGINT; keep them numbers (all fit in 2^53).
    supportBigNumbers: true,
    bigNumberStrings: false,
    charset: 'utf8mb4',
    // A batch commit sends its statements in one packet (values escaped by mysql2, as for
    // every parameterised query of this pool); no SQL is ever built from raw input.
    multipleStatements: true,
    queryFormat: formatUnlessEmpty,
  });
  // Queued on the new connection before the query it was opened for; a connection that
  // could not take it is closed, so that query fails rather than run unprotected.
  pool.on('connection', (connection) => {
    connection.query(BACKSLASH_ESCAPES, (error) => {
      if (error) connection.destroy();
    });
  });
  return pool;
}

/**
 * mysql2's own formatting, except that a query with no values is sent as it is: mysql2 would
 * scan its whole text for placeholders first, and a batch's packet (hundreds of KiB, its
 * values already escaped) spent about a tenth of the node's busy time in that scan.
 */
function formatUnlessEmpty(
  this: { config: { stringifyObjects?: boolean; timezone?: string } },
  sql: string,
  values: unknown,
): string {
  if (values === undefined || (Array.isArray(values) && values.length === 0)) return sql;
  return format(sql, values as SqlValue[], this.config.stringifyObjects, this.config.timezone);
}

function sqliteDialect(url: string, checkpointers: Checkpointer[]): SqliteDialect {
  const file = url.replace(/^sqlite:(\/\/)?/i, '');
  const inMemory = file === ':memory:';
  if (!inMemory) prepareSqliteFile(file);
  return new SqliteDialect({
    database: async () => {
      const database = new SqliteDatabase(file);
      // WAL: readers never block the single writer; NORMAL is durable across app crashes.
      database.pragma('journal_mode = WAL');
      database.pragma('synchronous = NORMAL');
      database.pragma('busy_timeout = 5000');
      if (!inMemory) checkpointers.push(checkpointOffLoop(database, file));
      return Promise.resolve(withStatementCache(database));
    },
  });
}

/**
 * The database holds password hashes, webhook secrets and wallets: only its owner may read
 * it. A missing directory is created 0700; the file is created 0600 before SQLite opens it
 * (SQLite gives its -wal and -shm files the database file's mode). An existing file, or
 * -wal/-shm file, that group or others can access is narrowed to its owner's bits.
 */
function prepareSqliteFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  if (process.platform === 'win32') return;
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue; // no -wal/-shm yet
    }
    if ((mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
  }
}

/** Every migration, by name (applied in name order). */
export function migrationsOf(flavor: SqlFlavor): Record<string, Migration> {
  return {
    '0001_room_cell_runtime': roomCellRuntime(flavor),
    '0002_webhooks': webhookTables(flavor),
    '0003_accounts': accountTables(flavor),
    '0004_voice_rooms': voiceRoomTables(flavor),
    '0005_request_outcomes': requestOutcomeTables(flavor),
    '0006_room_owner_index': roomOwnerIndex(),
    '0007_meetings': meetingTables(flavor),
    '0008_notifications': notificationTables(flavor),
    '0009_meeting_ended_index': meetingEndedIndex(),
    '0010_notification_created_index': notificationCreatedIndex(),
    '0011_notification_request_keys': notificationRequestKeys(flavor),
    '0012_room_cell_connection': roomCellConnection(flavor),
    '0013_request_outcome_created_index': requestOutcomeCreatedIndex(),
    '0014_room_outbox_pruned': roomOutboxPruned(flavor),
    '0015_room_reactions': roomReactionTables(flavor),
    '0016_webhook_crowd_events': webhookCrowdEvents(),
    '0017_room_snapshots': roomSnapshots(flavor),
    '0018_voice_chat_rankings': voiceChatRankings(flavor),
    '0019_user_nickname_index': userNicknameIndex(),
  };
}

async function migrateToLatest(db: Kysely<Database>, flavor: SqlFlavor): Promise<void> {
  const migrations = migrationsOf(flavor);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed`, { cause: error });
  }
}
