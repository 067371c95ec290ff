/**
 * The cell runtime's contract, run against every backend (SQLite + in-memory, MariaDB +
 * Redis). Each test states an invariant from DESIGN.md and can fail.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CellHost } from './host.js';
import type { CounterCommand } from './testing/counter-domain.js';
import { routeKey } from './lease.js';
import { counter, eventually, sleep, type TestBackend } from './testing/harness.js';
import { runLocal, stateOf } from './testing/routing.js';
import { hostsPerTest } from './testing/suite.js';

export function cellRuntimeContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('cell runtime contract', { skip: options.skip ?? false }, () => {
    const suite = hostsPerTest(openBackend, 'r');
    const { freshRoom } = suite;
    const host = suite.start;

    const logOf = async (roomId: string) =>
      suite
        .db()
        .selectFrom('room_command_log')
        .select(['version', 'request_id', 'owner_node_id', 'lease_token', 'lease_epoch'])
        .where('room_id', '=', roomId)
        .orderBy('version')
        .execute();
    const cellRow = async (roomId: string) =>
      suite
        .db()
        .selectFrom('room_cells')
        .selectAll()
        .where('room_id', '=', roomId)
        .executeTakeFirstOrThrow();

    it('commits commands with consecutive versions and records who committed them', async () => {
      const { host: a } = await host();
      const key = freshRoom();
      const results = [];
      for (const amount of [1, 2, 3]) results.push(await runLocal(a, key, { type: 'Add', amount }));
      assert.deepEqual(
        results.map((r) => [r.version, r.reply]),
        [
          [1, { count: 1 }],
          [2, { count: 3 }],
          [3, { count: 6 }],
        ],
      );
      const log = await logOf(key.roomId);
      assert.deepEqual(
        log.map((r) => Number(r.version)),
        [1, 2, 3],
      );
      assert.ok(log.every((r) => r.owner_node_id === a.nodeId && r.lease_token.length > 0));
      assert.equal(Number((await cellRow(key.roomId)).version), 3);
    });

    it('a domain error changes nothing', async () => {
      const { host: a } = await host();
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 2 });
      await assert.rejects(runLocal(a, key, { type: 'Add', amount: -5 }), {
        kind: 'illegal_state',
        code: 'BELOW_ZERO',
      });
      await assert.rejects(runLocal(a, key, { type: 'Add', amount: 0.5 }), { kind: 'validation' });
      assert.equal((await logOf(key.roomId)).length, 1);
      assert.equal((await stateOf(a, key)).count, 2);
    });

    it('a retried request id returns the first result, also after a restart', async () => {
      const first = await host();
      const key = freshRoom();
      const r1 = await runLocal(first.host, key, { type: 'Add', amount: 5 }, 'req-1');
      const again = await runLocal(first.host, key, { type: 'Add', amount: 5 }, 'req-1');
      assert.deepEqual(again, { ...r1, duplicate: true });
      await runLocal(first.host, key, { type: 'Add', amount: 1 }, 'req-2');
      await first.drain();
      const second = await host();
      const retried = await runLocal(second.host, key, { type: 'Add', amount: 5 }, 'req-1');
      assert.deepEqual(retried, { version: 1, reply: { count: 5 }, duplicate: true });
      assert.equal((await stateOf(second.host, key)).count, 6);
      assert.equal((await logOf(key.roomId)).length, 2);
    });

    it('1,000 concurrent commands get versions 1..1000 with no gap in far fewer transactions', async () => {
      const { host: a } = await host();
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 0 }); // activate first: measure the batching only
      const batchesBefore = await commitCount(a);
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          runLocal(a, key, { type: 'Add', amount: 1 }, `c${i}`),
        ),
      );
      const versions = results.map((r) => r.version).sort((x, y) => x - y);
      assert.deepEqual(
        versions,
        Array.from({ length: 1000 }, (_, i) => i + 1),
      );
      const log = await logOf(key.roomId);
      assert.deepEqual(
        log.map((r) => Number(r.version)),
        versions,
      );
      const batches = (await commitCount(a)) - batchesBefore;
      assert.ok(
        batches >= 1 && batches <= 100,
        `expected group commit, got ${batches} transactions`,
      );
      assert.equal((await stateOf(a, key)).count, 1000);
    });

    it('recovers from snapshot + log replay exactly what was committed', async () => {
      const a = await host();
      const key = freshRoom();
      for (let i = 1; i <= 25; i++) await runLocal(a.host, key, { type: 'Add', amount: i });
      assert.equal(Number((await cellRow(key.roomId)).snapshot_version), 20); // snapshotEvery = 10
      await a.kill(); // no final snapshot: versions 21..25 must come from the log
      const b = await host();
      const state = await eventually(async () => {
        const routed = await b.host
          .query(counter, key, (s, v) => ({ s, v }))
          .catch(() => undefined);
        return routed?.kind === 'local' ? routed.value : undefined;
      });
      assert.equal(state.v, 25);
      assert.equal(state.s.count, (25 * 26) / 2);
    });

    it('a host stopped without drain is replaced after the TTL with the committed state', async () => {
      const a = await host();
      const b = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 7 });
      await a.kill();
      const early = await b.host.execute(counter, key, { type: 'Add', amount: 1 });
      assert.equal(early.kind, 'remote', 'the dead owner keeps its lease until the TTL');
      const result = await eventually(async () => {
        const routed = await b.host
          .execute(counter, key, { type: 'Add', amount: 1 }, { requestId: 'after-ttl' })
          .catch(() => undefined);
        return routed?.kind === 'local' ? routed.value : undefined;
      });
      assert.deepEqual([result.version, result.reply], [2, { count: 8 }]);
    });

    it('drain releases leases so another host acquires at once', async () => {
      const slow = { leaseTtlMs: 30_000 }; // only a release, not expiry, can explain a handover
      const a = await host({ config: slow });
      const b = await host({ config: slow });
      const keys = [freshRoom(), freshRoom(), freshRoom()];
      for (const key of keys) await runLocal(a.host, key, { type: 'Add', amount: 1 });
      await a.drain();
      for (const key of keys) {
        const r = await runLocal(b.host, key, { type: 'Add', amount: 1 });
        assert.deepEqual(r.reply, { count: 2 });
      }
    });

    it('a draining node finishes accepted commands and refuses new ones', async () => {
      const a = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 0 }); // loaded: commands are accepted at once
      const accepted = Array.from({ length: 50 }, (_, i) =>
        runLocal(a.host, key, { type: 'Add', amount: 1 }, `d${i}`),
      );
      await sleep(0);
      const drained = a.drain();
      await assert.rejects(runLocal(a.host, freshRoom(), { type: 'Add', amount: 1 }), {
        kind: 'unavailable',
        code: 'NODE_DRAINING',
      });
      const done = await Promise.all(accepted);
      assert.equal(Math.max(...done.map((r) => r.version)), 50);
      await drained;
      assert.equal(Number((await cellRow(key.roomId)).snapshot_version), 50, 'drain snapshots');
    });

    it('fires each timer deadline exactly once', async () => {
      const { host: a } = await host();
      const key = freshRoom();
      const t1 = Date.now() + 100;
      const t2 = t1 + 50;
      await runLocal(a, key, { type: 'Schedule', atMs: t2 });
      await runLocal(a, key, { type: 'Schedule', atMs: t1 });
      await eventually(async () => (await stateOf(a, key)).fired.length === 2);
      // Ticks past them must not fire them again: a later deadline firing shows they ran.
      const t3 = Date.now() + 100;
      await runLocal(a, key, { type: 'Schedule', atMs: t3 });
      await eventually(async () => (await stateOf(a, key)).fired.includes(t3));
      assert.deepEqual((await stateOf(a, key)).fired, [t1, t2, t3]);
      assert.equal(Number((await cellRow(key.roomId)).next_alarm_ms ?? 0), 0);
    });

    it('fires timers of a room whose owner died (sweeper)', async () => {
      const a = await host();
      const b = await host();
      const key = freshRoom();
      const at = Date.now() + 300;
      await runLocal(a.host, key, { type: 'Schedule', atMs: at });
      assert.equal(Number((await cellRow(key.roomId)).next_alarm_ms), at);
      await a.kill();
      await eventually(() => b.host.loaded(key), 5_000);
      await eventually(async () => (await stateOf(b.host, key)).fired.length === 1);
      // The sweeper and b's timers kept running past it: a later deadline fires, once.
      const later = Date.now() + 100;
      await runLocal(b.host, key, { type: 'Schedule', atMs: later });
      await eventually(async () => (await stateOf(b.host, key)).fired.includes(later));
      assert.deepEqual((await stateOf(b.host, key)).fired, [at, later]);
    });

    it('the sweeper reaches an orphan behind a full page of overdue rooms that live owners hold', async () => {
      const a = await host();
      const b = await host();
      const c = await host();
      // 100 rooms held by a live owner, their rows' alarms overdue and staying so.
      const held = Array.from({ length: 100 }, () => freshRoom());
      for (const key of held) await runLocal(a.host, key, { type: 'Add', amount: 1 });
      await suite
        .db()
        .updateTable('room_cells' as never)
        .set({ next_alarm_ms: 1 } as never)
        .where('room_id' as never, 'in', held.map((k) => k.roomId) as never)
        .execute();
      // Behind them in the sweeper's order: a room whose owner died with a timer due.
      const orphan = freshRoom();
      await runLocal(c.host, orphan, { type: 'Schedule', atMs: Date.now() + 200 });
      await c.kill();
      await eventually(() => b.host.loaded(orphan) ?? a.host.loaded(orphan), 10_000);
      await eventually(
        async () =>
          (await stateOf((b.host.loaded(orphan) ? b : a).host, orphan)).fired.length === 1,
      );
      assert.ok(
        held.every((key) => a.host.loaded(key)),
        'the live owner kept its rooms',
      );
    });

    it('a refusal inside the transaction fails only that command', async () => {
      const { host: a } = await host();
      const key = freshRoom();
      const account = `acct-${key.roomId}`;
      await suite
        .db()
        .insertInto('counter_limits' as never)
        .values({ account, max_total: 10 })
        .execute();
      const [r1, r2, r3] = await Promise.allSettled([
        runLocal(a, key, { type: 'Charge', account, amount: 6 }, 'ch-1'),
        runLocal(a, key, { type: 'Charge', account, amount: 6 }, 'ch-2'),
        runLocal(a, key, { type: 'Add', amount: 1 }, 'ch-3'),
      ]);
      assert.equal(r1.status === 'fulfilled' && r1.value.version, 1);
      assert.equal(
        r2.status === 'rejected' && (r2.reason as { code: string }).code,
        'LIMIT_EXCEEDED',
      );
      assert.equal(r3.status === 'fulfilled' && r3.value.version, 2);
      const charges = await suite
        .db()
        .selectFrom('counter_charges' as never)
        .select(['request_id' as never])
        .where('account' as never, '=', account as never)
        .execute();
      assert.deepEqual(charges, [{ request_id: 'ch-1' }]);
      assert.equal((await stateOf(a, key)).count, 7);
    });

    it('writes one outbox row per event with the full envelope', async () => {
      const { host: a } = await host();
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 3 });
      const rows = await suite
        .db()
        .selectFrom('room_outbox')
        .selectAll()
        .where('room_id', '=', key.roomId)
        .execute();
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      assert.equal(row.status, 'pending');
      const envelope = JSON.parse(row.envelope) as Record<string, unknown>;
      assert.deepEqual(
        { ...envelope, occurred_at_ms: typeof envelope.occurred_at_ms },
        {
          app_code: 'default',
          event_id: row.event_id,
          room_id: key.roomId,
          room_version: 1,
          type: 'Added',
          occurred_at_ms: 'number',
          data: { type: 'Added', amount: 3 },
        },
      );
    });

    it('announces each commit once, in version order, with its outbox envelopes', async () => {
      const seen: { version: number; types: string[]; envelopes: number }[] = [];
      const { host: a } = await host({
        onCommitted: (batch) =>
          seen.push({
            version: batch.version,
            types: batch.entries.flatMap((e) => e.events.map((ev) => ev.type)),
            envelopes: batch.envelopes.length,
          }),
      });
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 1 });
      await assert.rejects(runLocal(a, key, { type: 'Add', amount: -9 }));
      await runLocal(a, key, { type: 'Add', amount: 0 }); // no event: nothing to announce
      await runLocal(a, key, { type: 'Schedule', atMs: Date.now() + 60_000 });
      assert.deepEqual(seen, [
        { version: 1, types: ['Added'], envelopes: 1 },
        { version: 2, types: ['Scheduled'], envelopes: 1 },
      ]);
    });

    it('unloads idle cells, releases their lease, and reloads them on demand', async () => {
      const { host: a } = await host({ config: { idleAfterMs: 150 } });
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 4 });
      await eventually(() => !a.loaded(key));
      assert.equal(await a.deps.lease.ownerOf(routeKey(key)), null);
      const r = await runLocal(a, key, { type: 'Add', amount: 1 });
      assert.deepEqual([r.version, r.reply], [2, { count: 5 }]);
    });

    it('a non-owner says where the room lives; a forwarded call is never forwarded again', async () => {
      const { host: a } = await host();
      const { host: b } = await host();
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 1 });
      const routed = await b.execute(counter, key, { type: 'Add', amount: 1 });
      assert.deepEqual(routed, { kind: 'remote', nodeId: a.nodeId, addr: a.config.advertiseAddr });
      await assert.rejects(
        b.execute(counter, key, { type: 'Add', amount: 1 }, { forwarded: true }),
        {
          kind: 'unavailable',
          code: 'NOT_OWNER_NODE',
        },
      );
      assert.equal((await logOf(key.roomId)).length, 1);
    });

    it('a non-owner remembers where a room lives for a moment, and asks again once told to forget', async () => {
      const { host: a } = await host();
      let asked = 0;
      const { host: b } = await host({
        // A long TTL: the remembered route lives 250 ms, far longer than these calls take.
        config: { leaseTtlMs: 10_000 },
        wrapLease: (lease) => ({
          ensureOwner: (...args) => (asked++, lease.ensureOwner(...args)),
          renew: (...args) => lease.renew(...args),
          verifyOwner: (...args) => lease.verifyOwner(...args),
          release: (...args) => lease.release(...args),
          ownerOf: (...args) => lease.ownerOf(...args),
          close: () => lease.close(),
        }),
      });
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 1 });
      const first = await b.execute(counter, key, { type: 'Add', amount: 1 });
      const second = await b.execute(counter, key, { type: 'Add', amount: 1 });
      const remote = { kind: 'remote', nodeId: a.nodeId, addr: a.config.advertiseAddr };
      assert.deepEqual([first, second], [remote, { ...remote, cached: true }]);
      assert.equal(asked, 1, 'the second call did not ask Redis');
      // A forwarded call is never answered from the remembered route.
      await assert.rejects(
        b.execute(counter, key, { type: 'Add', amount: 1 }, { forwarded: true }),
        {
          code: 'NOT_OWNER_NODE',
        },
      );
      b.forgetRoute(key);
      assert.deepEqual(await b.execute(counter, key, { type: 'Add', amount: 1 }), remote);
      assert.equal(asked, 3);
    });

    it('a renewal that finds the lease taken drops the cell without any command', async () => {
      const a = await host();
      const b = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 });
      await a.host.deps.lease.release(routeKey(key), a.host.loaded(key)!.leaseToken);
      const taken = await b.host.query(counter, key, (s) => s.count);
      assert.deepEqual(taken, { kind: 'local', value: 1 });
      const fencedBefore = await fencedCount(a.host);
      await eventually(() => !a.host.loaded(key));
      assert.equal(await fencedCount(a.host), fencedBefore + 1);
      const renewals = await a.host.metrics.leaseRenewals.get();
      assert.ok(renewals.values.some((v) => v.labels.outcome === 'lost' && v.value >= 1));
    });

    it('a node stopped past its lease claims the room no more, and its next read loads it again', async () => {
      const { host: a } = await host({ config: { leaseTtlMs: 300 } });
      const key = freshRoom();
      await runLocal(a, key, { type: 'Add', amount: 1 });
      const stale = a.loaded(key);
      assert.equal(a.ownsNow(key), true);
      // Stopped as under SIGSTOP: the event loop blocked, no renewal ran, the lease expired.
      const until = Date.now() + 400;
      while (Date.now() < until);
      assert.equal(a.ownsNow(key), false, 'a stopped owner still claims the room');
      // The read renews first: the lease is gone, so the room is loaded again from SQL.
      assert.equal((await stateOf(a, key)).count, 1);
      assert.equal(stale?.closed, true);
      assert.notEqual(a.loaded(key), stale);
      assert.equal(a.ownsNow(key), true);
    });

    it('when the lease is forgotten while two hosts hold a cell, one commit per version', async () => {
      const a = await host();
      const b = await host();
      const key = freshRoom();
      await runLocal(a.host, key, { type: 'Add', amount: 1 }, 'f-0');
      // Redis forgets the route (as on FLUSHALL or failover); b then wins EnsureOwner.
      const cellA = a.host.loaded(key)!;
      await a.host.deps.lease.release(routeKey(key), cellA.leaseToken);
      await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'f-b1');
      const add: CounterCommand = { type: 'Add', amount: 1 };
      const fromA = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => cellA.submit(add, `f-a${i}`)),
      );
      assert.ok(
        fromA.every((r) => r.status === 'rejected'),
        'the stale owner must not commit',
      );
      await runLocal(b.host, key, { type: 'Add', amount: 1 }, 'f-b2');
      const log = await logOf(key.roomId);
      assert.deepEqual(
        log.map((r) => [Number(r.version), r.request_id]),
        [
          [1, 'f-0'],
          [2, 'f-b1'],
          [3, 'f-b2'],
        ],
      );
      assert.equal((await stateOf(b.host, key)).count, 3);
    });
  });
}

async function fencedCount(host: CellHost): Promise<number> {
  return (await host.metrics.fenced.get()).values[0]?.value ?? 0;
}

/** Commit transactions so far: the sample count of the batch-size histogram. */
async function commitCount(host: CellHost): Promise<number> {
  const metric = await host.metrics.batchSize.get();
  return metric.values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
}
