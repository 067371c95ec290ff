/**
 * One behavioural contract for every {@link LeaseManager} / {@link NodeRegistry} adapter, so the
 * in-memory adapters used by embedded mode cannot drift from the Redis ones.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { routeKey, type LeaseManager, type NodeRegistry } from '../cell/lease.js';
import type { Clock } from '../shared/clock.js';

/**
 * Lets lease time pass. A manual clock jumps; real Redis TTLs can only be waited out, so that
 * variant sleeps (plus slack for expiry-check granularity) and uses a short TTL.
 */
export interface ManualOrRealControl {
  advance(ms: number): Promise<void>;
  /** TTL for expiry tests: short enough to wait out, long enough to outlast a few round trips. */
  readonly shortTtlMs: number;
}

export interface LeaseEnv {
  readonly lease: LeaseManager;
  readonly registry: NodeRegistry;
  readonly clock: ManualOrRealControl;
  cleanup(): Promise<void>;
}

/** A manual clock for in-memory adapters, plus its control. */
export function manualTime(startMs = 1_700_000_000_000): {
  clock: Clock;
  control: ManualOrRealControl;
} {
  let now = startMs;
  return {
    clock: { nowMs: () => now },
    control: {
      shortTtlMs: 1_000,
      advance: (ms) => {
        now += ms;
        return Promise.resolve();
      },
    },
  };
}

/** Real time for adapters whose TTLs run on a server. */
export function realTime(shortTtlMs: number, slackMs = 30): ManualOrRealControl {
  return { shortTtlMs, advance: (ms) => sleep(ms + slackMs) };
}

/** Long enough that nothing expires during a test that is not about expiry. */
const LONG_TTL = 60_000;
const ROUTE = routeKey({ appCode: 'voice', roomId: 'room-1' });

export function leaseContract(
  name: string,
  make: () => Promise<LeaseEnv>,
  options: { skip?: string | boolean } = {},
): void {
  /** Each test gets a fresh environment, cleaned up even when it fails. */
  const withEnv = (fn: (env: LeaseEnv) => Promise<void>) => async () => {
    const env = await make();
    try {
      await fn(env);
    } finally {
      await env.cleanup();
    }
  };

  void describe(`${name}: lease contract`, { skip: options.skip ?? false }, () => {
    void it(
      'grants an unowned route',
      withEnv(async ({ lease }) => {
        assert.equal(await lease.ownerOf(ROUTE), null);
        const r = await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL);
        assert.equal(r.granted, true);
        assert.ok(r.granted && r.token.length > 0);
        assert.equal(await lease.ownerOf(ROUTE), 'node-a');
        assert.equal(await lease.verifyOwner(ROUTE, r.token), true);
      }),
    );

    void it(
      'renewal by the holder issues a new token and retires the old one',
      withEnv(async ({ lease }) => {
        const first = await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL);
        const second = await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL);
        assert.ok(first.granted && second.granted);
        assert.notEqual(second.token, first.token);
        assert.equal(await lease.verifyOwner(ROUTE, first.token), false);
        assert.equal(await lease.verifyOwner(ROUTE, second.token), true);
        assert.equal(await lease.ownerOf(ROUTE), 'node-a');
      }),
    );

    void it(
      'renew swaps the held token for a new one and extends the TTL',
      withEnv(async ({ lease, clock }) => {
        const ttl = clock.shortTtlMs;
        const first = await lease.ensureOwner(ROUTE, 'node-a', ttl);
        assert.ok(first.granted);
        await clock.advance((ttl * 2) / 3);
        const renewed = await lease.renew(ROUTE, first.token, ttl);
        assert.ok(renewed.renewed);
        assert.notEqual(renewed.token, first.token);
        assert.equal(await lease.verifyOwner(ROUTE, first.token), false);
        await clock.advance((ttl * 2) / 3);
        assert.equal(await lease.verifyOwner(ROUTE, renewed.token), true);
        assert.equal(await lease.ownerOf(ROUTE), 'node-a');
        // The retired token renews nothing, even for the same node.
        assert.deepEqual(await lease.renew(ROUTE, first.token, LONG_TTL), {
          renewed: false,
          ownerNodeId: 'node-a',
        });
        assert.equal(await lease.verifyOwner(ROUTE, renewed.token), true);
      }),
    );

    void it(
      'renew never grants a route whose key is gone: not after expiry, release or loss',
      withEnv(async ({ lease, clock }) => {
        const ttl = clock.shortTtlMs;
        const expired = await lease.ensureOwner(ROUTE, 'node-a', ttl);
        assert.ok(expired.granted);
        await clock.advance(ttl);
        assert.deepEqual(await lease.renew(ROUTE, expired.token, LONG_TTL), {
          renewed: false,
          ownerNodeId: null,
        });
        assert.equal(await lease.ownerOf(ROUTE), null, 'nothing was written');

        // Taken by another node, then released by it: the old holder's token is still dead.
        const b = await lease.ensureOwner(ROUTE, 'node-b', LONG_TTL);
        assert.ok(b.granted);
        assert.deepEqual(await lease.renew(ROUTE, expired.token, LONG_TTL), {
          renewed: false,
          ownerNodeId: 'node-b',
        });
        assert.ok(await lease.release(ROUTE, b.token));
        for (const token of [expired.token, b.token, 'never-issued']) {
          assert.deepEqual(await lease.renew(ROUTE, token, LONG_TTL), {
            renewed: false,
            ownerNodeId: null,
          });
        }
        assert.equal(await lease.ownerOf(ROUTE), null);
        await assert.rejects(lease.renew(ROUTE, b.token, 0), RangeError);
      }),
    );

    void it(
      'another node is told the holder and does not disturb it',
      withEnv(async ({ lease }) => {
        const a = await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL);
        assert.ok(a.granted);
        assert.deepEqual(await lease.ensureOwner(ROUTE, 'node-b', LONG_TTL), {
          granted: false,
          ownerNodeId: 'node-a',
        });
        assert.equal(await lease.verifyOwner(ROUTE, a.token), true);
        assert.equal(await lease.ownerOf(ROUTE), 'node-a');
      }),
    );

    void it(
      'expiry after the TTL frees the route for another node',
      withEnv(async ({ lease, clock }) => {
        const ttl = clock.shortTtlMs;
        const a = await lease.ensureOwner(ROUTE, 'node-a', ttl);
        assert.ok(a.granted);
        await clock.advance(ttl / 3);
        assert.equal((await lease.ensureOwner(ROUTE, 'node-b', ttl)).granted, false);
        await clock.advance(ttl);
        assert.equal(await lease.ownerOf(ROUTE), null);
        assert.equal(await lease.verifyOwner(ROUTE, a.token), false);
        assert.equal(await lease.release(ROUTE, a.token), false);
        const b = await lease.ensureOwner(ROUTE, 'node-b', LONG_TTL);
        assert.ok(b.granted);
        assert.deepEqual(await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL), {
          granted: false,
          ownerNodeId: 'node-b',
        });
      }),
    );

    void it(
      'renewal extends the TTL',
      withEnv(async ({ lease, clock }) => {
        const ttl = clock.shortTtlMs;
        assert.ok((await lease.ensureOwner(ROUTE, 'node-a', ttl)).granted);
        await clock.advance((ttl * 2) / 3);
        const renewed = await lease.ensureOwner(ROUTE, 'node-a', ttl);
        assert.ok(renewed.granted);
        await clock.advance((ttl * 2) / 3);
        assert.equal(await lease.ownerOf(ROUTE), 'node-a');
        assert.equal(await lease.verifyOwner(ROUTE, renewed.token), true);
      }),
    );

    void it(
      'verifyOwner is false for an unknown route or token',
      withEnv(async ({ lease }) => {
        assert.equal(await lease.verifyOwner(ROUTE, 'no-such-token'), false);
        assert.ok((await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL)).granted);
        assert.equal(await lease.verifyOwner(ROUTE, 'no-such-token'), false);
        assert.equal(await lease.verifyOwner(ROUTE, ''), false);
      }),
    );

    void it(
      'release needs the current token and then frees the route at once',
      withEnv(async ({ lease }) => {
        const old = await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL);
        const cur = await lease.ensureOwner(ROUTE, 'node-a', LONG_TTL);
        assert.ok(old.granted && cur.granted);
        assert.equal(await lease.release(ROUTE, 'wrong-token'), false);
        assert.equal(await lease.release(ROUTE, old.token), false);
        assert.equal(await lease.ownerOf(ROUTE), 'node-a');
        assert.equal(await lease.verifyOwner(ROUTE, cur.token), true);

        assert.equal(await lease.release(ROUTE, cur.token), true);
        assert.equal(await lease.ownerOf(ROUTE), null);
        assert.equal(await lease.verifyOwner(ROUTE, cur.token), false);
        assert.equal(await lease.release(ROUTE, cur.token), false);
        assert.ok((await lease.ensureOwner(ROUTE, 'node-b', LONG_TTL)).granted);
      }),
    );

    void it(
      'the same room id in two apps are independent routes',
      withEnv(async ({ lease }) => {
        const voice = routeKey({ appCode: 'voice', roomId: 'r1' });
        const meet = routeKey({ appCode: 'meet', roomId: 'r1' });
        const a = await lease.ensureOwner(voice, 'node-a', LONG_TTL);
        const b = await lease.ensureOwner(meet, 'node-b', LONG_TTL);
        assert.ok(a.granted && b.granted);
        assert.equal(await lease.ownerOf(voice), 'node-a');
        assert.equal(await lease.ownerOf(meet), 'node-b');
        assert.equal(await lease.verifyOwner(meet, a.token), false);
        assert.equal(await lease.release(meet, a.token), false);
        assert.equal(await lease.release(voice, a.token), true);
        assert.equal(await lease.ownerOf(meet), 'node-b');
        assert.equal(await lease.ownerOf(routeKey({ appCode: 'voice', roomId: 'r' })), null);
      }),
    );

    void it(
      'rejects a TTL Redis PX would reject and a node id containing a newline',
      withEnv(async ({ lease }) => {
        await assert.rejects(lease.ensureOwner(ROUTE, 'node-a', 0), RangeError);
        await assert.rejects(lease.ensureOwner(ROUTE, 'node-a', -5), RangeError);
        await assert.rejects(lease.ensureOwner(ROUTE, 'node-a', Number.NaN), RangeError);
        await assert.rejects(lease.ensureOwner(ROUTE, 'node\na', LONG_TTL), RangeError);
        assert.equal(await lease.ownerOf(ROUTE), null);
      }),
    );

    void it(
      '200 concurrent ensureOwner calls from 5 nodes grant exactly one node',
      withEnv(async ({ lease }) => {
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            lease
              .ensureOwner(ROUTE, `node-${i % 5}`, LONG_TTL)
              .then((r) => ({ node: `node-${i % 5}`, r })),
          ),
        );
        const winners = new Set(results.filter((x) => x.r.granted).map((x) => x.node));
        assert.equal(winners.size, 1);
        const [winner] = winners;
        const told = new Set(results.flatMap((x) => (x.r.granted ? [] : [x.r.ownerNodeId])));
        assert.deepEqual([...told], [winner]);
        assert.equal(results.filter((x) => !x.r.granted).length, 160);
        assert.equal(await lease.ownerOf(ROUTE), winner);
        const tokens = results.flatMap((x) => (x.r.granted ? [x.r.token] : []));
        assert.equal(new Set(tokens).size, 40);
        const current = await Promise.all(tokens.map((t) => lease.verifyOwner(ROUTE, t)));
        assert.equal(current.filter(Boolean).length, 1);
      }),
    );

    void it(
      'close is idempotent',
      withEnv(async ({ lease, registry }) => {
        await lease.close();
        await lease.close();
        await registry.close();
        await registry.close();
      }),
    );
  });

  void describe(`${name}: node registry contract`, { skip: options.skip ?? false }, () => {
    void it(
      'register, lookup, refresh and deregister',
      withEnv(async ({ registry }) => {
        assert.equal(await registry.lookup('node-a'), null);
        await registry.register('node-a', '10.0.0.1:7000', LONG_TTL);
        await registry.register('node-b', '10.0.0.2:7000', LONG_TTL);
        assert.equal(await registry.lookup('node-a'), '10.0.0.1:7000');
        await registry.register('node-a', '10.0.0.9:7000', LONG_TTL);
        assert.equal(await registry.lookup('node-a'), '10.0.0.9:7000');
        await registry.deregister('node-a');
        assert.equal(await registry.lookup('node-a'), null);
        assert.equal(await registry.lookup('node-b'), '10.0.0.2:7000');
        await registry.deregister('node-unknown');
      }),
    );

    void it(
      'lists the live nodes with their addresses',
      withEnv(async ({ registry, clock }) => {
        assert.deepEqual(await registry.liveNodes(), []);
        const ttl = clock.shortTtlMs;
        await registry.register('node-a', '10.0.0.1:7000', LONG_TTL);
        await registry.register('node-b', '10.0.0.2:7000', ttl);
        await registry.register('node-c', '10.0.0.3:7000', LONG_TTL);
        await registry.deregister('node-c');
        const byId = (nodes: readonly { nodeId: string }[]) =>
          [...nodes].sort((x, y) => x.nodeId.localeCompare(y.nodeId));
        assert.deepEqual(byId(await registry.liveNodes()), [
          { nodeId: 'node-a', advertiseAddr: '10.0.0.1:7000' },
          { nodeId: 'node-b', advertiseAddr: '10.0.0.2:7000' },
        ]);
        await clock.advance(ttl * 2);
        assert.deepEqual(await registry.liveNodes(), [
          { nodeId: 'node-a', advertiseAddr: '10.0.0.1:7000' },
        ]);
      }),
    );

    void it(
      'an entry expires after its TTL unless refreshed',
      withEnv(async ({ registry, clock }) => {
        const ttl = clock.shortTtlMs;
        await registry.register('node-a', 'a:1', ttl);
        await registry.register('node-b', 'b:1', ttl);
        await clock.advance((ttl * 2) / 3);
        assert.equal(await registry.lookup('node-a'), 'a:1');
        await registry.register('node-b', 'b:1', ttl);
        await clock.advance((ttl * 2) / 3);
        assert.equal(await registry.lookup('node-a'), null);
        assert.equal(await registry.lookup('node-b'), 'b:1');
        await assert.rejects(registry.register('node-c', 'c:1', 0), RangeError);
      }),
    );
  });
}
