import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { openSqlBackend } from './database.js';
import { checkpointOffLoop, FALLBACK_CHECKPOINT_PAGES } from './sqlite-checkpointer.js';

/** A WAL database file in `dir` with one table. */
function walDatabase(dir: string) {
  const file = join(dir, 'wal.sqlite');
  const db = new SqliteDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('create table t (id integer primary key, body text)');
  return { db, file };
}

/** Bursts of commits (about 1 MiB of pages each) with pauses; the WAL file's size after each. */
async function walSizesOverBursts(db: SqliteDatabase.Database, file: string) {
  const insert = db.prepare('insert into t (body) values (?)');
  const sizes: number[] = [];
  for (let burst = 0; burst < 5; burst++) {
    for (let i = 0; i < 250; i++) insert.run('x'.repeat(4000));
    sizes.push(statSync(`${file}-wal`).size);
    await sleep(300);
  }
  return sizes;
}

void describe('checkpointOffLoop', () => {
  void it('keeps the WAL from growing with the node checkpointing nothing itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rooms-ckpt-'));
    try {
      // Without a checkpointer and with autocheckpoint off, every burst lengthens the WAL.
      const alone = walDatabase(dir);
      alone.db.pragma('wal_autocheckpoint = 0');
      const grown = await walSizesOverBursts(alone.db, alone.file);
      alone.db.close();
      assert.ok(grown[4]! > 4 * grown[0]!, `the WAL grew without one: ${grown.join(', ')}`);

      const dir2 = mkdtempSync(join(dir, 'with-'));
      const { db, file } = walDatabase(dir2);
      const checkpointer = checkpointOffLoop(db, file, { everyMs: 50, fallbackPages: 1_000_000 });
      const sizes = await walSizesOverBursts(db, file);
      // Each pause lets the worker copy every page, so the next burst restarts the WAL.
      assert.ok(sizes[4]! < 2 * sizes[0]!, `the WAL stayed bounded: ${sizes.join(', ')}`);
      assert.equal((db.prepare('select count(*) as n from t').get() as { n: number }).n, 1250);
      await checkpointer.close();
      await checkpointer.close();
      db.close();
      assert.equal(existsSync(`${file}-wal`), false, 'the last connection removed the WAL');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  void it('leaves the WAL bounded by the fallback once its worker is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rooms-ckpt-fallback-'));
    try {
      const { db, file } = walDatabase(dir);
      db.pragma('wal_autocheckpoint = 0'); // what the fallback replaces
      const checkpointer = checkpointOffLoop(db, file, { everyMs: 60_000, fallbackPages: 100 });
      await checkpointer.close(); // no worker from here on
      const sizes = await walSizesOverBursts(db, file);
      // The node's own checkpoint past 100 pages: each burst reuses the WAL from its start.
      assert.ok(sizes[4]! < 2 * sizes[0]!, `the WAL stayed bounded: ${sizes.join(', ')}`);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  void it('runs under the embedded backend and closes with it, the data kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rooms-ckpt-backend-'));
    try {
      const file = join(dir, 'rooms.sqlite');
      const first = await openSqlBackend(`sqlite:${file}`);
      // The node's connection checkpoints only past the fallback: the worker has the rest.
      const { rows: pages } = await sql<{
        wal_autocheckpoint: number;
      }>`pragma wal_autocheckpoint`.execute(first.db);
      assert.deepEqual(pages, [{ wal_autocheckpoint: FALLBACK_CHECKPOINT_PAGES }]);
      await sql`create table kept (n integer)`.execute(first.db);
      await sql`insert into kept (n) values (7)`.execute(first.db);
      await first.close();
      await first.close();
      assert.equal(existsSync(`${file}-wal`), false, 'closed whole: no WAL left behind');
      const again = await openSqlBackend(`sqlite:${file}`);
      const { rows } = await sql<{ n: number }>`select n from kept`.execute(again.db);
      assert.deepEqual(rows, [{ n: 7 }]);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
