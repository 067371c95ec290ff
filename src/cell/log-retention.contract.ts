/**
 * The runtime's log retention on every backend: the command log is deleted only at or below
 * each room's snapshot and only once old enough, so activation from the snapshot and the
 * log after it still rebuilds the room exactly; request ids are forgotten after the retry
 * window, and not before; a backlog goes in bounded batches, and two sweeps at once overlap
 * without failing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Clock } from '../shared/clock.js';
import { sqlLogRetentionStore } from '../adapters/sql/log-retention-store.js';
import { LogRetention, type LogRetentionConfig } from './log-retention.js';
import { silentLogger, type TestBackend } from './testing/harness.js';
import { runLocal, runOnceOwner, stateOf } from './testing/routing.js';
import { hostsPerTest } from './testing/suite.js';

export function logRetentionContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('log retention', { skip: options.skip ?? false }, () => {
    const suite = hostsPerTest(openBackend, 'lr');
    const { freshRoom } = suite;
    const at = (nowMs: number): Clock => ({ nowMs: () => nowMs });
    const retention = (config: LogRetentionConfig, clock: Clock) =>
      new LogRetention(config, {
        store: sqlLogRetentionStore(suite.db()),
        clock,
        logger: silentLogger,
      });
    const logged = async (roomId: string) =>
      (
        await suite
          .db()
          .selectFrom('room_command_log')
          .select(['version', 'created_at_ms'])
          .where('room_id', '=', roomId)
          .orderBy('version')
          .execute()
      ).map((r) => ({ version: Number(r.version), at: Number(r.created_at_ms) }));
    const snapshotOf = async (roomId: string) =>
      Number(
        (
          await suite
            .db()
            .selectFrom('room_cells')
            .select('snapshot_version')
            .where('room_id', '=', roomId)
            .executeTakeFirstOrThrow()
        ).snapshot_version,
      );
    const outcomeIds = async (roomId: string) =>
      (
        await suite
          .db()
          .selectFrom('room_request_outcomes')
          .select('request_id')
          .where('room_id', '=', roomId)
          .orderBy('request_id')
          .execute()
      ).map((r) => r.request_id);
    const addMany = async (
      host: Awaited<ReturnType<typeof suite.start>>,
      n: number,
      key = freshRoom(),
    ) => {
      for (let i = 0; i < n; i++)
        await runLocal(host.host, key, { type: 'Add', amount: 1 }, `c${i}`);
      return key;
    };

    it('deletes old log rows at or below the snapshot only; the room activates exactly from what is left', async () => {
      const a = await suite.start();
      const key = await addMany(a, 25);
      // Everything of `key` is older than the line; `young` is written after it.
      const line = (await logged(key.roomId)).at(-1)!.at + 1;
      while (Date.now() < line) await new Promise((r) => setTimeout(r, 1));
      const young = await addMany(a, 25);
      await a.kill(); // no snapshot on the way out: the one the commits wrote stays
      const snapshot = await snapshotOf(key.roomId);
      assert.ok(snapshot > 0 && snapshot < 25, `a snapshot below the head (${snapshot})`);
      const logMs = 60_000;
      const now = line + logMs;
      const deleted = await retention({ logMs, requestIdMs: 0 }, at(now)).sweep();

      const left = await logged(key.roomId);
      assert.deepEqual(
        left.map((r) => r.version),
        Array.from({ length: 25 - snapshot }, (_, i) => snapshot + 1 + i),
        'only the rows above the snapshot stay',
      );
      assert.equal((await logged(young.roomId)).length, 25, 'rows younger than the line stay');
      assert.equal(deleted, snapshot);

      const b = await suite.start();
      await runOnceOwner(b.host, key, { type: 'Add', amount: 0 }, 'owner-now'); // after the TTL
      assert.equal((await stateOf(b.host, key)).count, 25, 'snapshot + the log after it');
      const next = await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'next');
      assert.equal(next.version, 26);
      // The outcome of a compacted command is still there: its retry is a duplicate.
      const retried = await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'c2');
      assert.deepEqual([retried.version, retried.duplicate], [3, true]);
    });

    it('forgets request ids after the retry window once the log no longer holds them', async () => {
      const a = await suite.start();
      const key = freshRoom();
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: -5 }, 'old-no'));
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'old');
      await addMany(a, 10, key); // c0…c9: versions 2…11, a snapshot on the way
      const recorded = await suite
        .db()
        .selectFrom('room_request_outcomes')
        .select(({ fn }) => fn.max('created_at_ms').as('last'))
        .where('room_id', '=', key.roomId)
        .executeTakeFirstOrThrow();
      const line = Number(recorded.last) + 1;
      while (Date.now() <= line) await new Promise((r) => setTimeout(r, 1));
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'young');
      await a.kill();
      const window = 3_600_000;
      await retention({ logMs: window, requestIdMs: window }, at(line + window)).sweep();
      const snapshot = await snapshotOf(key.roomId);
      const keptAboveSnapshot = Array.from(
        { length: 11 - snapshot },
        (_, i) => `c${snapshot - 1 + i}`,
      );
      assert.deepEqual(await outcomeIds(key.roomId), [...keptAboveSnapshot, 'young'].sort());

      const b = await suite.start();
      await runOnceOwner(b.host, key, { type: 'Add', amount: 0 }, 'owner-now'); // after the TTL
      const young = await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'young');
      assert.deepEqual([young.version, young.duplicate], [12, true]);
      const kept = await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'c9');
      assert.deepEqual([kept.version, kept.duplicate], [11, true]);
      // Past the window these ids name nothing any more: a copy is a new request.
      const old = await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'old');
      assert.deepEqual([old.version, old.duplicate], [13, false]);
      const refusedBefore = await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'old-no');
      assert.deepEqual([refusedBefore.version, refusedBefore.duplicate], [14, false]);
    });

    it('works off a backlog in bounded batches; two sweeps at once only overlap', async () => {
      const a = await suite.start();
      const keys = [await addMany(a, 30), await addMany(a, 30)];
      await a.kill();
      const compactable = (await snapshotOf(keys[0]!.roomId)) + (await snapshotOf(keys[1]!.roomId));
      // Every row of both rooms is older than the line (a row written in the very
      // millisecond the line was drawn would not be).
      const last = (await logged(keys[1]!.roomId)).at(-1)!.at;
      const now = last + 2;
      const small = { logMs: 1, requestIdMs: 0, batchSize: 7, maxBatchesPerSweep: 2 };
      assert.equal(await retention(small, at(now)).sweep(), 14, 'two batches of seven');
      const rest = await Promise.all([
        retention({ ...small, maxBatchesPerSweep: 20 }, at(now)).sweep(),
        retention({ ...small, maxBatchesPerSweep: 20 }, at(now)).sweep(),
      ]);
      assert.ok(rest[0] + rest[1] >= compactable - 14, 'between them, the rest');
      const third = await retention(small, at(now)).sweep();
      assert.equal(third, 0, `after ${JSON.stringify(rest)} of ${compactable - 14}`);
      for (const key of keys) {
        assert.equal((await logged(key.roomId)).length, 30 - (await snapshotOf(key.roomId)));
      }
    });

    it('is off with both ages 0', () => {
      assert.equal(retention({ logMs: 0, requestIdMs: 0 }, at(0)).enabled, false);
    });
  });
}
