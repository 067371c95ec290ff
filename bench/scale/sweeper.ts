/**
 * `sweeper`: the cell host's orphan-alarm sweeper (src/cell/background.ts) asks SQL every
 * ROOMS_SWEEP_INTERVAL_MS for the rooms whose alarm is due (`dueAlarmsQuery`). Per size,
 * from scratch: a fresh database of that many room_cells rows (1 in 100 due, 1 in 10 due in
 * an hour, the rest with no alarm, sweeper-rows.ts), the query timed QUERIES times on
 * MariaDB and on SQLite, and its plan printed; then the same without the index on the
 * alarm column, the baseline that shows what the index buys.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { openSqlBackend, type SqlBackend } from '../../src/adapters/sql/database.js';
import { dueAlarmsQuery } from '../../src/adapters/sql/sql-cell-store.js';
import { createTestDatabase, mariadbAvailable } from '../../src/testing/backends.js';
import { median } from '../load.js';
import type { ScaleDimension, ScaleFigures } from './dimension.js';
import { dueCount, insertCellsSql, ROWS_PER_INSERT } from './sweeper-rows.js';

const QUERIES = Number(process.env.BENCH_SWEEP_QUERIES ?? 30);
/** The sweeper's page (src/cell/background.ts). */
const LIMIT = 100;

async function fill(sql: SqlBackend, rows: number, nowMs: number): Promise<void> {
  const insert = async (db: SqlBackend['db']) => {
    for (let from = 0; from < rows; from += ROWS_PER_INSERT) {
      const count = Math.min(ROWS_PER_INSERT, rows - from);
      await db.executeQuery(CompiledQuery.raw(insertCellsSql(from, count, nowMs)));
    }
  };
  // One transaction on SQLite (a commit per statement would sync each time).
  if (sql.flavor === 'sqlite') await sql.db.transaction().execute(insert);
  else await insert(sql.db);
}

/** The plan, one line per row of EXPLAIN (MariaDB) or EXPLAIN QUERY PLAN (SQLite). */
async function plan(sql: SqlBackend, nowMs: number): Promise<string[]> {
  const query = dueAlarmsQuery(sql.db, nowMs, LIMIT).compile();
  const prefix = sql.flavor === 'sqlite' ? 'explain query plan ' : 'explain ';
  const result = await sql.db.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(prefix + query.sql, [...query.parameters]),
  );
  return result.rows.map((row) =>
    sql.flavor === 'sqlite'
      ? String(row.detail)
      : ['type', 'key', 'rows', 'Extra'].map((k) => `${k}=${String(row[k])}`).join(' '),
  );
}

/** Median ms of the sweeper's query; checks it returns a full page of due rooms. */
async function timeQuery(sql: SqlBackend, nowMs: number, rows: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const started = performance.now();
    const due = await dueAlarmsQuery(sql.db, nowMs, LIMIT).execute();
    times.push(performance.now() - started);
    if (due.length !== Math.min(LIMIT, dueCount(rows))) {
      throw new Error(`${due.length} due rooms, expected ${Math.min(LIMIT, dueCount(rows))}`);
    }
  }
  return median(times);
}

async function measure(sql: SqlBackend, rows: number, label: string) {
  const nowMs = Date.now();
  const filled = performance.now();
  await fill(sql, rows, nowMs);
  const fillS = (performance.now() - filled) / 1000;
  const indexed = await timeQuery(sql, nowMs, rows);
  const indexedPlan = await plan(sql, nowMs);
  const drop = sql.db.schema.dropIndex('room_cells_next_alarm');
  await (sql.flavor === 'mysql' ? drop.on('room_cells') : drop).execute();
  const scanned = await timeQuery(sql, nowMs, rows);
  const scannedPlan = await plan(sql, nowMs);
  console.log(
    `  ${label}, ${rows} rows (filled in ${fillS.toFixed(1)} s): ${indexed.toFixed(3)} ms with the index, ${scanned.toFixed(3)} ms without\n` +
      `    plan with the index:    ${indexedPlan.join(' | ')}\n` +
      `    plan without the index: ${scannedPlan.join(' | ')}`,
  );
  return { indexed, scanned };
}

/** Opens a backend, measures on it, closes it. */
async function measureOn(open: () => Promise<SqlBackend>, rows: number, label: string) {
  const sql = await open();
  try {
    return await measure(sql, rows, label);
  } finally {
    await sql.close();
  }
}

async function run(rows: number): Promise<ScaleFigures> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rooms-scale-sweeper-'));
  const sqlite = await measureOn(
    () => openSqlBackend(path.join(dir, 'rooms.sqlite')),
    rows,
    'SQLite',
  ).finally(() => rm(dir, { recursive: true, force: true }));
  const figures: ScaleFigures = {
    sweep_query_sqlite_ms: sqlite.indexed,
    sweep_query_sqlite_noindex_ms: sqlite.scanned,
  };
  if (!(await mariadbAvailable())) {
    console.log('  MariaDB not answering: SQLite only');
    return figures;
  }
  const database = await createTestDatabase();
  const mariadb = await measureOn(
    () => openSqlBackend(database.url, { poolSize: 2 }),
    rows,
    'MariaDB',
  ).finally(() => database.drop());
  return { ...figures, sweep_query_ms: mariadb.indexed, sweep_query_noindex_ms: mariadb.scanned };
}

export const sweeper: ScaleDimension = {
  name: 'sweeper',
  what: "the alarm sweeper's due-rooms query against room_cells rows, with and without its index",
  unit: 'room_cells rows',
  sizes: [10_000, 100_000, 1_000_000],
  plots: [
    {
      figure: 'sweep_query_ms',
      label: 'MariaDB query median (ms)',
      with: [{ figure: 'sweep_query_noindex_ms', label: 'without the index' }],
    },
    {
      figure: 'sweep_query_sqlite_ms',
      label: 'SQLite query median (ms)',
      with: [{ figure: 'sweep_query_sqlite_noindex_ms', label: 'without the index' }],
    },
  ],
  run,
};
