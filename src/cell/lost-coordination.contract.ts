/**
 * What a node does when Redis loses a room's lease and the node registry under it (a
 * FLUSHALL, a restart without data), run against every backend. The keys are removed the
 * way the loss does (the lease deleted under its token, the registry entry deleted); the
 * lease TTL is long, so no renewal or heartbeat rewrites them during a test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { routeKey, type CellKey } from './lease.js';
import { counter, type TestBackend } from './testing/harness.js';
import { runLocal, stateOf } from './testing/routing.js';
import { hostsPerTest } from './testing/suite.js';
import type { CellHost } from './host.js';

const QUIET = { leaseTtlMs: 60_000 };

export function lostCoordinationContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('a room whose Redis keys vanished', { skip: options.skip ?? false }, () => {
    const suite = hostsPerTest(openBackend, 'lost');
    const { freshRoom } = suite;
    const host = async () => (await suite.start({ config: QUIET })).host;
    // One lease + registry view onto the backend's coordination, as any node sees it.
    let view: ReturnType<TestBackend['coordination']>;

    before(() => {
      view = suite.backend().coordination();
    });
    after(async () => {
      await view?.close();
    });

    /** Deletes the room's lease as a FLUSHALL does (whoever holds it). */
    const loseLease = async (owner: CellHost, key: CellKey) => {
      const cell = owner.loaded(key);
      assert.ok(cell, `${owner.nodeId} has the room loaded`);
      assert.ok(await view.lease.release(routeKey(key), cell.leaseToken), 'the lease was there');
    };
    const epochOf = async (roomId: string) =>
      Number(
        (
          await suite
            .db()
            .selectFrom('room_cells')
            .select('lease_epoch')
            .where('room_id', '=', roomId)
            .executeTakeFirstOrThrow()
        ).lease_epoch,
      );
    const logOf = (roomId: string) =>
      suite
        .db()
        .selectFrom('room_command_log')
        .select(['version', 'owner_node_id', 'lease_epoch'])
        .where('room_id', '=', roomId)
        .orderBy('version')
        .execute();

    it('the owner takes its free lease again and keeps the room loaded, epoch unchanged', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 1 });
      const cell = a.loaded(key);
      const epoch = await epochOf(key.roomId);
      await loseLease(a, key);
      await view.registry.deregister(a.nodeId);

      // The commit that finds the lease gone writes nothing and fails UNAVAILABLE (seed).
      await assert.rejects(runLocal(a, key, { type: 'Add', amount: 10 }), {
        kind: 'unavailable',
        code: 'CELL_FENCED',
      });
      assert.equal(a.loaded(key), cell, 'the same cell, not closed and reloaded');
      assert.equal(cell?.closed, false);
      assert.equal(await view.lease.ownerOf(routeKey(key)), a.nodeId, 'the lease is back');
      assert.ok(await view.registry.lookup(a.nodeId), 'and the owner can be forwarded to');

      const next = await runLocal(a, key, { type: 'Add', amount: 2 });
      assert.deepEqual([next.version, next.reply], [2, { count: 3 }]);
      assert.equal(await epochOf(key.roomId), epoch, 'no reload bumped the epoch');
      assert.deepEqual(
        (await logOf(key.roomId)).map((r) => [Number(r.version), Number(r.lease_epoch)]),
        [
          [1, epoch],
          [2, epoch],
        ],
      );
    });

    it('an owner whose lease another node took and lost meanwhile lets the room go, and reads what that node committed', async () => {
      const a = await host();
      const b = await host();
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 1 });
      const stale = a.loaded(key);
      await loseLease(a, key);
      // Node b takes the free lease, fences a in SQL and commits; then its lease is lost too.
      await runLocal(b, key, { type: 'Add', amount: 5 });
      await loseLease(b, key);

      // a's commit finds its token gone. The lease is free again, but the epoch in SQL is
      // no longer a's: another node loaded the room, so a's memory proves nothing.
      await assert.rejects(runLocal(a, key, { type: 'Add', amount: 100 }), { kind: 'unavailable' });
      assert.equal(await view.lease.ownerOf(routeKey(key)), null, 'the lease was given back');
      // A read through a: loaded again from SQL, with b's commit in it.
      assert.equal((await stateOf(a, key)).count, 6, 'a answered from its stale memory');
      assert.equal(stale?.closed, true);
      assert.notEqual(a.loaded(key), stale);
      assert.deepEqual(
        (await logOf(key.roomId)).map((r) => [Number(r.version), r.owner_node_id]),
        [
          [1, a.nodeId],
          [2, b.nodeId],
        ],
        'nothing of the stale owner after the other node’s commit',
      );
    });

    it('a node that activates a room is registered again for forwarding at once', async () => {
      const a = await host();
      const b = await host();
      await view.registry.deregister(b.nodeId);
      const key = freshRoom();
      await runLocal(b, key, { type: 'Add', amount: 1 });
      const routed = await a.execute(counter, key, { type: 'Add', amount: 1 });
      assert.equal(routed.kind, 'remote');
      assert.equal(routed.kind === 'remote' ? routed.nodeId : null, b.nodeId);
    });
  });
}
