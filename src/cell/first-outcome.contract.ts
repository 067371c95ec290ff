/**
 * DESIGN invariant 3 on every backend: a request id's first decided outcome is final. A
 * retry is answered with it on any host, after any owner change, whatever the state is now,
 * and never creates a version; a creation that is refused writes nothing at all.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AppError } from '../shared/errors.js';
import type { LeaseManager } from './lease.js';
import { counterDomain } from './testing/counter-domain.js';
import { pauseAfterVerify, type PauseAfterVerify } from './testing/pausable-lease.js';
import { counter, eventually, type TestBackend } from './testing/harness.js';
import { runLocal, runOnceOwner, stateOf } from './testing/routing.js';
import { hostsPerTest } from './testing/suite.js';

/** A second room kind with the counter's rules, to try cells of different kinds. */
const otherKind = { ...counterDomain(), kind: 'other-counter' };

export function firstOutcomeContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('a request id keeps its first outcome', { skip: options.skip ?? false }, () => {
    const suite = hostsPerTest(openBackend, 'fo');
    const { freshRoom } = suite;
    const host = (wrapLease?: (lease: LeaseManager) => LeaseManager) =>
      suite.start({ domains: [otherKind], ...(wrapLease ? { wrapLease } : {}) });

    const versionOf = async (roomId: string) => {
      const row = await suite
        .db()
        .selectFrom('room_cells')
        .select(['version', 'lease_epoch'])
        .where('room_id', '=', roomId)
        .executeTakeFirst();
      return row ? { version: Number(row.version), epoch: Number(row.lease_epoch) } : null;
    };
    const loggedRequests = async (roomId: string) =>
      (
        await suite
          .db()
          .selectFrom('room_command_log')
          .select('request_id')
          .where('room_id', '=', roomId)
          .orderBy('version')
          .execute()
      ).map((r) => r.request_id);
    const outcomeRows = async (roomId: string) =>
      suite
        .db()
        .selectFrom('room_request_outcomes')
        .selectAll()
        .where('room_id', '=', roomId)
        .execute();

    it('a refusal stays a refusal after an owner change, though the state now allows it', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 2 }, 'seed');
      const refused = { kind: 'illegal_state', code: 'BELOW_ZERO' };
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: -5 }, 'r1'), refused);
      await runLocal(a.host, key, { type: 'Add', amount: 10 }, 'r2');
      // The same owner answers from memory …
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: -5 }, 'r1'), refused);
      await a.drain();
      // … and the next owner from SQL: count is 12 now, so deciding again would succeed.
      const b = await host();
      await assert.rejects(runLocal(b.host, key, { type: 'Add', amount: -5 }, 'r1'), refused);
      assert.deepEqual(await loggedRequests(key.roomId), ['seed', 'r2']);
      assert.equal((await stateOf(b.host, key)).count, 12);
      assert.equal((await versionOf(key.roomId))?.version, 2);
    });

    it('a success stays the same success after an owner change, though deciding again would refuse', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 3 }, 'up');
      const first = await runLocal(a.host, key, { type: 'Add', amount: -3 }, 'down');
      assert.deepEqual(first, { version: 2, reply: { count: 0 }, duplicate: false });
      await a.kill(); // no drain: the lease must expire first
      const b = await host();
      const retried = await runOnceOwner(b.host, key, { type: 'Add', amount: -3 }, 'down');
      assert.deepEqual(retried, { version: 2, reply: { count: 0 }, duplicate: true });
      assert.equal((await versionOf(key.roomId))?.version, 2);
    });

    it('a no-op keeps the version it answered, also after the room moved on and changed owner', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'one');
      const noop = await runLocal(a.host, key, { type: 'Add', amount: 0 }, 'noop');
      assert.deepEqual(noop, { version: 1, reply: { count: 1 }, duplicate: false });
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'two');
      await a.drain();
      const b = await host();
      const retried = await runLocal(b.host, key, { type: 'Add', amount: 0 }, 'noop');
      assert.deepEqual(retried, { version: 1, reply: { count: 1 }, duplicate: true });
      assert.deepEqual(await loggedRequests(key.roomId), ['one', 'two']);
    });

    it('one batch mixing a retry of a decided request with new ones answers each correctly', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'm0');
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: -9 }, 'm1'));
      await a.drain();
      const b = await host();
      // Activate first, so the three below are decided in one batch by a cell that has
      // never seen m1 (its refusal is only in SQL).
      await runLocal(b.host, key, { type: 'Add', amount: 9 }, 'm2');
      const [retry, fresh] = await Promise.allSettled([
        runLocal(b.host, key, { type: 'Add', amount: -9 }, 'm1'),
        runLocal(b.host, key, { type: 'Add', amount: 5 }, 'm3'),
      ]);
      assert.equal(retry.status, 'rejected');
      assert.equal((retry.reason as AppError).code, 'BELOW_ZERO');
      assert.equal(fresh.status, 'fulfilled');
      assert.deepEqual(fresh.value, { version: 3, reply: { count: 15 }, duplicate: false });
      assert.deepEqual(await loggedRequests(key.roomId), ['m0', 'm2', 'm3']);
    });

    it('copies of one request sent at once take effect once; all but one say duplicate', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'seed');
      const copies = await Promise.all(
        Array.from({ length: 5 }, () => runLocal(a.host, key, { type: 'Add', amount: 2 }, 'twin')),
      );
      assert.deepEqual(copies.map((c) => [c.version, c.duplicate]).sort(), [
        [2, false],
        [2, true],
        [2, true],
        [2, true],
        [2, true],
      ]);
      assert.equal((await stateOf(a.host, key)).count, 3);
    });

    it('a request id sent again with another command is refused, and its first outcome stays', async () => {
      const a = await host();
      const key = freshRoom();
      const reused = { kind: 'conflict', code: 'REQUEST_ID_REUSED' };
      await runLocal(a.host, key, { type: 'Add', amount: 2 }, 'k');
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: 3 }, 'k'), reused);
      // A refusal is an outcome too: another body under its id is not decided afresh.
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: -9 }, 'no'), {
        code: 'BELOW_ZERO',
      });
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: 1 }, 'no'), reused);
      await a.kill(); // the next owner knows the first requests from SQL only
      const b = await host();
      await runOnceOwner(b.host, key, { type: 'Add', amount: 0 }, 'owner-now');
      await assert.rejects(runLocal(b.host, key, { type: 'Add', amount: 3 }, 'k'), reused);
      await assert.rejects(runLocal(b.host, key, { type: 'Add', amount: 1 }, 'no'), reused);
      // The plain retries still get their first answers.
      assert.deepEqual(await runLocal(b.host, key, { type: 'Add', amount: 2 }, 'k'), {
        version: 1,
        reply: { count: 2 },
        duplicate: true,
      });
      await assert.rejects(runLocal(b.host, key, { type: 'Add', amount: -9 }, 'no'), {
        code: 'BELOW_ZERO',
      });
      assert.deepEqual(await loggedRequests(key.roomId), ['k']);
      assert.equal((await stateOf(b.host, key)).count, 2);
    });

    it('copies of one request id with different bodies sent at once: one takes effect, the rest are refused', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'seed');
      const settled = await Promise.allSettled(
        [2, 3, 2, 4].map((amount) => runLocal(a.host, key, { type: 'Add', amount }, 'twin')),
      );
      const done = settled.filter((s) => s.status === 'fulfilled');
      const refused = settled.flatMap((s) =>
        s.status === 'rejected' ? [s.reason as AppError] : [],
      );
      // The first copy decides (amount 2); its twin is a duplicate; 3 and 4 are another request.
      assert.equal(done.length, 2);
      assert.deepEqual(
        refused.map((e) => e.code),
        ['REQUEST_ID_REUSED', 'REQUEST_ID_REUSED'],
      );
      assert.equal((await stateOf(a.host, key)).count, 3);
      assert.deepEqual(await loggedRequests(key.roomId), ['seed', 'twin']);
    });

    it('a refused creation writes no row, no outcome and keeps no lease', async () => {
      const a = await host();
      const key = freshRoom();
      await assert.rejects(runLocal(a.host, key, { type: 'Add', amount: -1 }, 'c1'), {
        code: 'BELOW_ZERO',
      });
      assert.equal(await versionOf(key.roomId), null);
      assert.equal((await outcomeRows(key.roomId)).length, 0);
      await eventually(() => a.host.loaded(key) === undefined);
      // The lease is free at once: another host owns the room without waiting for a TTL.
      const b = await host();
      const created = await runLocal(b.host, key, { type: 'Add', amount: 4 }, 'c2');
      assert.deepEqual(created, { version: 1, reply: { count: 4 }, duplicate: false });
      assert.deepEqual(await versionOf(key.roomId), { version: 1, epoch: 1 });
    });

    it('a command of another kind is refused before anything is written', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'k1');
      const before = await versionOf(key.roomId);
      const mismatch = { code: 'ROOM_KIND_MISMATCH' };
      // Loaded here …
      await assert.rejects(a.host.execute(otherKind, key, { type: 'Add', amount: 1 }), mismatch);
      await a.drain();
      // … and not loaded anywhere: the epoch is not bumped by the wrong kind.
      const b = await host();
      await assert.rejects(b.host.execute(otherKind, key, { type: 'Add', amount: 1 }), mismatch);
      await assert.rejects(
        b.host.query(otherKind, key, (s) => s),
        mismatch,
      );
      assert.deepEqual(await versionOf(key.roomId), before);
    });

    it('a command whose caller stopped waiting is never decided, even when it was queued in time', async () => {
      let pausable!: PauseAfterVerify;
      const a = await host((lease) => (pausable = pauseAfterVerify(lease)).lease);
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'd0');
      await assert.rejects(
        a.host.execute(
          counter,
          key,
          { type: 'Add', amount: 1 },
          {
            requestId: 'late-1',
            deadlineMs: Date.now() - 1,
          },
        ),
        { code: 'DEADLINE_EXCEEDED' },
      );
      // One commit is held after verifyOwner; a command queued behind it outlives its caller.
      const pause = pausable.arm();
      const held = runLocal(a.host, key, { type: 'Add', amount: 1 }, 'd1');
      await pause.reached;
      const queued = a.host.execute(
        counter,
        key,
        { type: 'Add', amount: 1 },
        {
          requestId: 'late-2',
          deadlineMs: Date.now() + 50,
        },
      );
      // Refused whenever its turn comes: behind the held batch, or as soon as that one is sent.
      const refused = assert.rejects(queued, { code: 'DEADLINE_EXCEEDED' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      pause.release();
      await held;
      await refused;
      assert.deepEqual(await loggedRequests(key.roomId), ['d0', 'd1']);
      assert.equal(
        (await outcomeRows(key.roomId)).filter((r) => r.request_id.startsWith('late')).length,
        0,
      );
    });
  });
}
