/**
 * Retention of settled outbox rows, on SQLite and on MariaDB (two nodes with their own
 * pools sweeping at once there): what is deleted, what never is, and in bounded batches.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { SqlBackend } from '../adapters/sql/database.js';
import type { OutboxStatus } from '../adapters/sql/schema.js';
import { silentLogger, type TestBackend } from '../cell/testing/harness.js';
import { OutboxRetention, type RetentionConfig } from './retention.js';
import { SqlOutboxStore } from './sql-outbox-store.js';
import { insertEvents } from './testing/outbox-rows.js';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

export function retentionContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('outbox retention', { skip: options.skip ?? false }, () => {
    let backend: TestBackend;
    let sql: SqlBackend;
    let nodes: SqlOutboxStore[];
    const retention = (config: RetentionConfig, store = nodes[0]!) =>
      new OutboxRetention(config, { store, clock: { nowMs: () => T0 }, logger: silentLogger });

    /** `count` rows of one room in `status`, last changed `ageMs` before T0. */
    const seed = async (status: OutboxStatus, ageMs: number, count = 1): Promise<string[]> => {
      const tag = `${status}-${ageMs}-${Math.random().toString(36).slice(2, 8)}`;
      const ids = await insertEvents(
        sql.db,
        Array.from({ length: count }, (_, i) => ({ roomId: tag, version: i + 1 })),
        T0 - ageMs,
      );
      await sql.db
        .updateTable('room_outbox')
        .set({
          status,
          updated_at_ms: T0 - ageMs,
          ...(status === 'delivering' ? { worker_id: 'w', lock_until_ms: T0 - ageMs + 1 } : {}),
        })
        .where('event_id', 'in', ids)
        .execute();
      return ids;
    };
    const remaining = async () =>
      new Set(
        (await sql.db.selectFrom('room_outbox').select('event_id').execute()).map(
          (r) => r.event_id,
        ),
      );

    before(async () => {
      backend = await openBackend();
      sql = backend.inspect;
      nodes = [
        new SqlOutboxStore(await backend.sqlForHost()),
        new SqlOutboxStore(await backend.sqlForHost()),
      ];
    });
    beforeEach(async () => {
      await sql.db.deleteFrom('room_outbox').execute();
    });
    after(async () => {
      await backend?.close();
    });

    it('deletes delivered and skipped rows past the retention, failed ones past their own; never unsettled ones', async () => {
      const gone = [
        ...(await seed('delivered', WEEK + 1, 5)),
        ...(await seed('skipped', 10 * DAY, 3)),
        ...(await seed('failed', 31 * DAY, 2)),
      ];
      const kept = [
        ...(await seed('delivered', WEEK - 1, 2)),
        ...(await seed('skipped', HOUR)),
        ...(await seed('failed', 10 * DAY, 2)), // past the settled retention, not the failed one
        // Not settled: kept however old (a stuck delivering row is claimed again, not lost).
        ...(await seed('pending', 60 * DAY)),
        ...(await seed('retryable', 60 * DAY)),
        ...(await seed('delivering', 60 * DAY)),
      ];
      // Batches of 2 rows: the sweep takes several statements and still finishes.
      const deleted = await retention({
        settledMs: WEEK,
        failedMs: 30 * DAY,
        batchSize: 2,
      }).sweep();
      assert.equal(deleted, gone.length);
      const left = await remaining();
      assert.deepEqual(
        gone.filter((id) => left.has(id)),
        [],
        'a row past its retention is still there',
      );
      assert.deepEqual(
        kept.filter((id) => !left.has(id)),
        [],
        'a row that must be kept was deleted',
      );
      assert.equal(left.size, kept.length);
    });

    it('0 keeps rows: settled retention off, failed retention off, or both', async () => {
      const delivered = await seed('delivered', 90 * DAY);
      const failed = await seed('failed', 90 * DAY);
      const off = retention({ settledMs: 0, failedMs: 0 });
      assert.equal(off.enabled, false);
      assert.equal(await off.sweep(), 0);
      assert.equal((await remaining()).size, 2);
      assert.equal(await retention({ settledMs: 0, failedMs: DAY }).sweep(), 1);
      assert.deepEqual([...(await remaining())], delivered);
      assert.ok(!(await remaining()).has(failed[0]!));
      const failedAgain = await seed('failed', 90 * DAY);
      assert.equal(await retention({ settledMs: DAY, failedMs: 0 }).sweep(), 1);
      assert.deepEqual([...(await remaining())], failedAgain);
    });

    it('one sweep deletes at most batchSize × maxBatchesPerSweep rows; the next one goes on', async () => {
      await seed('delivered', 30 * DAY, 7);
      const bounded = retention({
        settledMs: DAY,
        failedMs: 0,
        batchSize: 2,
        maxBatchesPerSweep: 2,
      });
      assert.equal(await bounded.sweep(), 4);
      assert.equal((await remaining()).size, 3);
      assert.equal(await bounded.sweep(), 3);
      assert.equal((await remaining()).size, 0);
    });

    it('two nodes sweeping at once delete every old row once, and nothing else', async () => {
      const old = await seed('delivered', 30 * DAY, 60);
      const fresh = await seed('delivered', HOUR, 5);
      const config = { settledMs: DAY, failedMs: 0, batchSize: 5, maxBatchesPerSweep: 100 };
      const counts = await Promise.all(nodes.map((store) => retention(config, store).sweep()));
      assert.equal(counts[0]! + counts[1]!, old.length, `deleted ${counts.join(' + ')}`);
      assert.deepEqual([...(await remaining())].sort(), [...fresh].sort());
    });
  });
}
