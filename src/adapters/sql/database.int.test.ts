/** The embedded database on disk: who may read it. */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql as kysql } from 'kysely';
import { openSqlBackend } from './database.js';

const modeOf = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);

void describe('SQLite database files', { skip: process.platform === 'win32' }, () => {
  let dir: string;
  let umask: number;

  before(async () => {
    // The usual umask: without an explicit mode, files would come out 0644.
    umask = process.umask(0o022);
    dir = await mkdtemp(join(tmpdir(), 'rooms-db-mode-'));
  });
  after(async () => {
    process.umask(umask);
    await rm(dir, { recursive: true, force: true });
  });

  void it('a new database: directories 0700, the file and its -wal/-shm 0600', async () => {
    const file = join(dir, 'new', 'data', 'rooms.sqlite');
    const sql = await openSqlBackend(`sqlite:${file}`);
    try {
      // A write: the WAL and its index exist while the database is open.
      await kysql`create table mode_probe (x integer)`.execute(sql.db);
      await kysql`insert into mode_probe values (1)`.execute(sql.db);
      assert.deepEqual(await Promise.all([file, `${file}-wal`, `${file}-shm`].map(modeOf)), [
        '600',
        '600',
        '600',
      ]);
      assert.deepEqual(
        await Promise.all([join(dir, 'new'), join(dir, 'new', 'data')].map(modeOf)),
        ['700', '700'],
      );
    } finally {
      await sql.close();
    }
  });

  void it('an existing database readable by others is narrowed to its owner', async () => {
    const file = join(dir, 'old.sqlite');
    await writeFile(file, '');
    await chmod(file, 0o644);
    const sql = await openSqlBackend(file);
    try {
      assert.deepEqual(await Promise.all([file, `${file}-wal`, `${file}-shm`].map(modeOf)), [
        '600',
        '600',
        '600',
      ]);
    } finally {
      await sql.close();
    }
  });
});
