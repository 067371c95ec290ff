/**
 * Migration 0017 moves snapshots out of `room_cells` (SQLite): a database written before it,
 * with a room's snapshot in its row, migrates to a `room_snapshots` row with the same JSON,
 * and the room activates from it (the snapshot, then the log after its version); the next
 * snapshot replaces that row and leaves `room_cells` without the column.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import { migrationsOf, openSqlBackend } from './database.js';
import { SqlCellStore } from './sql-cell-store.js';

void describe('snapshots in a table of their own (0017)', () => {
  let dir: string | undefined;
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  void it('moves a stored snapshot and activates the room from it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-snapshots-'));
    const file = join(dir, 'rooms.sqlite');
    const old = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: new SqliteDatabase(file) }),
    });
    const migrator = new Migrator({
      db: old,
      provider: { getMigrations: () => Promise.resolve(migrationsOf('sqlite')) },
    });
    const before = await migrator.migrateTo('0016_webhook_crowd_events');
    assert.equal(before.error, undefined);
    const state = JSON.stringify({ count: 41 });
    await sql`INSERT INTO room_cells (app_code, room_id, kind, version, lease_epoch,
      snapshot, snapshot_version, created_at_ms, updated_at_ms)
      VALUES ('default', 'r1', 'counter', 3, 1, ${state}, 2, 0, 0)`.execute(old);
    await sql`INSERT INTO room_command_log (app_code, room_id, version, request_id, command_type,
      payload, events, result, owner_node_id, lease_token, lease_epoch, created_at_ms)
      VALUES ('default', 'r1', 3, 'q3', 'Add', '{}', '[{"type":"Added"}]', '{}', 'n', 't', 1, 0)`.execute(
      old,
    );
    await old.destroy();

    const backend = await openSqlBackend(file);
    try {
      const moved = await backend.db.selectFrom('room_snapshots').selectAll().execute();
      assert.deepEqual(moved, [{ app_code: 'default', room_id: 'r1', snapshot: state }]);
      const columns = await sql<{ name: string }>`PRAGMA table_info(room_cells)`.execute(
        backend.db,
      );
      assert.ok(!columns.rows.some((c) => c.name === 'snapshot'), 'the column is gone');

      const store = new SqlCellStore(backend);
      const key = { appCode: 'default', roomId: 'r1' };
      const loaded = await store.activate(key, 'counter', 'node-b', Date.now(), false);
      assert.ok(loaded);
      assert.deepEqual(
        [loaded.snapshot, loaded.snapshotVersion, loaded.log.map((l) => l.version)],
        [state, 2, [3]],
      );
      // The next snapshot replaces the row, fenced by the room's epoch and version.
      assert.equal(await store.saveSnapshot(key, loaded.leaseEpoch, 3, '{"count":42}', 1), true);
      assert.equal(
        await store.saveSnapshot(key, loaded.leaseEpoch - 1, 3, '{"count":0}', 2),
        false,
      );
      const again = await store.activate(key, 'counter', 'node-c', Date.now(), false);
      assert.deepEqual(
        [again?.snapshot, again?.snapshotVersion, again?.log],
        ['{"count":42}', 3, []],
      );
    } finally {
      await backend.close();
    }
  });
});
