/**
 * Several hosts on one MariaDB + Redis: one owner per room, takeover after death, fencing
 * of a paused owner and of owners that Redis forgot, idempotency across owner changes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { clusterSkipReason, startPrivateRedis, type PrivateRedis } from '../testing/backends.js';
import { pauseAfterVerify } from './testing/pausable-lease.js';
import { counter, eventually, mariadbRedisBackend } from './testing/harness.js';
import { runAnywhere, runLocal, runOnceOwner, stateOf } from './testing/routing.js';
import { hostsPerTest } from './testing/suite.js';

const skip = await clusterSkipReason();

describe('cluster of hosts on MariaDB + Redis', { skip }, () => {
  const suite = hostsPerTest(mariadbRedisBackend, 'c');
  const { freshRoom } = suite;
  const host = suite.start;
  const logOf = (roomId: string) =>
    suite
      .db()
      .selectFrom('room_command_log')
      .select(['version', 'request_id'])
      .where('room_id', '=', roomId)
      .orderBy('version')
      .execute()
      .then((rows) => rows.map((r) => [Number(r.version), r.request_id] as const));

  it('three hosts: every room has exactly one owner, and a dead host is replaced with the committed state', async () => {
    const three = [await host(), await host(), await host()];
    const all = three.map((h) => h.host);
    const rooms = Array.from({ length: 30 }, () => freshRoom());
    const sent = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const key = rooms[i % rooms.length]!;
        const entry = all[(i * 7) % 3]!;
        await runAnywhere(all, entry, key, { type: 'Add', amount: 1 }, `m${i}`);
        sent.set(key.roomId, (sent.get(key.roomId) ?? 0) + 1);
      }),
    );
    for (const key of rooms) {
      const owners = all.filter((h) => h.loaded(key));
      assert.equal(owners.length, 1, `room ${key.roomId} loaded on ${owners.length} hosts`);
      const log = await logOf(key.roomId);
      assert.deepEqual(
        log.map(([v]) => v),
        Array.from({ length: sent.get(key.roomId)! }, (_, i) => i + 1),
      );
    }
    // Kill the owner of rooms[0]; a survivor serves it after the TTL with the same state.
    const victim = three.find((h) => h.host.loaded(rooms[0]!))!;
    await victim.kill();
    const survivors = all.filter((h) => h !== victim.host);
    const after = await eventually(() =>
      runAnywhere(
        survivors,
        survivors[0]!,
        rooms[0]!,
        { type: 'Add', amount: 1 },
        'after-death',
      ).catch(() => undefined),
    );
    const committed = sent.get(rooms[0]!.roomId)!;
    assert.deepEqual([after.version, after.reply], [committed + 1, { count: committed + 1 }]);
  });

  it('an owner paused between verifyOwner and COMMIT while another takes over is refused and writes nothing', async () => {
    const pausable = { current: null as ReturnType<typeof pauseAfterVerify> | null };
    const a = await host({
      wrapLease: (lease) => (pausable.current = pauseAfterVerify(lease)).lease,
    });
    const b = await host();
    const key = freshRoom();
    await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'p-1');
    const pause = pausable.current!.arm();
    const paused = runLocal(a.host, key, { type: 'Add', amount: 10 }, 'p-2').then(
      () => 'committed',
      (error: { code?: string }) => error.code,
    );
    await pause.reached;
    // a's lease renewal waits behind the paused batch, so its lease expires and b takes over:
    // EnsureOwner plus the epoch bump, without committing anything yet.
    await eventually(async () => {
      const routed = await b.host.query(counter, key, (s) => s.count).catch(() => undefined);
      return routed?.kind === 'local';
    });
    pause.release();
    assert.equal(await paused, 'CELL_FENCED');
    const byB = await runLocal(b.host, key, { type: 'Add', amount: 100 }, 'p-3');
    assert.equal(byB.version, 2);
    assert.deepEqual(await logOf(key.roomId), [
      [1, 'p-1'],
      [2, 'p-3'],
    ]);
    assert.equal((await stateOf(b.host, key)).count, 101);
  });

  describe('on a Redis that forgets (FLUSHALL on a private server)', () => {
    let redis: PrivateRedis;
    before(async () => {
      redis = await startPrivateRedis();
    });
    after(async () => {
      await redis?.stop();
    });

    it('two hosts holding the same cell never commit twice for one version', async () => {
      const a = await host({ redisUrl: redis.url });
      const b = await host({ redisUrl: redis.url });
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'x-0');
      const admin = new Redis(redis.url);
      await admin.flushall();
      admin.disconnect();
      // b now wins EnsureOwner and bumps the epoch while a still has the cell loaded.
      const acked = new Set<string>(['x-0']);
      const both = [a.host, b.host];
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const id = `x-${i + 1}`;
          const entry = both[i % 2]!;
          await runAnywhere(both, entry, key, { type: 'Add', amount: 1 }, id).then(
            () => acked.add(id),
            () => undefined,
          );
        }),
      );
      assert.ok(acked.size > 1, 'some commands must succeed after the flush');
      const log = await logOf(key.roomId);
      assert.deepEqual(
        log.map(([v]) => v),
        Array.from({ length: log.length }, (_, i) => i + 1),
        'versions without gap or repeat',
      );
      const logged = new Set(log.map(([, id]) => id));
      assert.equal(logged.size, log.length, 'each request id once');
      for (const id of acked) assert.ok(logged.has(id), `acknowledged ${id} is missing`);
      // Whoever owns it now replays to exactly the logged commands.
      const owner = both.find((h) => h.loaded(key) && !h.loaded(key)!.closed) ?? b.host;
      const routed = await owner.query(counter, key, (s, v) => ({ count: s.count, v }));
      assert.deepEqual(routed, { kind: 'local', value: { count: log.length, v: log.length } });
    });
  });

  it('a request id retried across an owner change charges once and returns the first result', async () => {
    const a = await host();
    const b = await host();
    const key = freshRoom();
    const account = `acct-${key.roomId}`;
    const first = await runLocal(a.host, key, { type: 'Charge', account, amount: 5 }, 'gift-1');
    await a.kill();
    const retried = await runOnceOwner(
      b.host,
      key,
      { type: 'Charge', account, amount: 5 },
      'gift-1',
    );
    assert.deepEqual(retried, { ...first, duplicate: true });
    const charges = await suite
      .db()
      .selectFrom('counter_charges' as never)
      .select(['request_id' as never])
      .where('account' as never, '=', account as never)
      .execute();
    assert.equal(charges.length, 1);
  });
});
