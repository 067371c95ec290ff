/**
 * One behavioural contract for every {@link RateLimiter} adapter, so the in-memory counters of
 * embedded mode cannot drift from the Redis ones a cluster shares.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RateLimiter } from '../shared/rate-limiter.js';
import type { ManualOrRealControl } from './lease.contract.js';

export interface RateLimiterEnv {
  /** Two handles on the same counters (two nodes in a cluster; the same object in memory). */
  readonly limiters: readonly [RateLimiter, RateLimiter];
  readonly clock: ManualOrRealControl;
  cleanup(): Promise<void>;
}

const LONG = 60_000;

export function rateLimiterContract(
  name: string,
  make: () => Promise<RateLimiterEnv>,
  options: { skip?: string | boolean } = {},
): void {
  const withEnv = (fn: (env: RateLimiterEnv) => Promise<void>) => async () => {
    const env = await make();
    try {
      await fn(env);
    } finally {
      await env.cleanup();
    }
  };

  void describe(`${name}: rate limiter contract`, { skip: options.skip ?? false }, () => {
    void it(
      'counts hits per key in one window, and peek does not count',
      withEnv(async ({ limiters: [a] }) => {
        assert.deepEqual(await a.peek('k'), { count: 0, resetInMs: 0 });
        for (let i = 1; i <= 3; i++) assert.equal((await a.hit('k', LONG)).count, i);
        const state = await a.peek('k');
        assert.equal(state.count, 3);
        assert.ok(state.resetInMs > LONG - 5_000 && state.resetInMs <= LONG, `${state.resetInMs}`);
        assert.equal((await a.peek('k')).count, 3);
        assert.equal((await a.hit('other', LONG)).count, 1, 'keys are independent');
      }),
    );

    void it(
      'shares counters between handles (nodes) and counts concurrent hits exactly',
      withEnv(async ({ limiters: [a, b] }) => {
        const counts = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).hit('shared', LONG)),
        );
        assert.deepEqual(
          counts.map((c) => c.count).sort((x, y) => x - y),
          Array.from({ length: 40 }, (_, i) => i + 1),
        );
        assert.equal((await b.peek('shared')).count, 40);
      }),
    );

    void it(
      'keeps the window of the first hit: later hits do not extend it, and it expires',
      withEnv(async ({ limiters: [a], clock }) => {
        const ttl = clock.shortTtlMs;
        await a.hit('w', ttl);
        await clock.advance(ttl / 2);
        const second = await a.hit('w', ttl);
        assert.equal(second.count, 2);
        assert.ok(second.resetInMs <= ttl / 2 + 20, `window extended: ${second.resetInMs}`);
        await clock.advance(ttl / 2);
        assert.deepEqual(await a.peek('w'), { count: 0, resetInMs: 0 });
        const fresh = await a.hit('w', ttl);
        assert.equal(fresh.count, 1, 'a new window starts from zero');
      }),
    );

    void it(
      'undo takes one back without going below zero or creating a key; reset forgets',
      withEnv(async ({ limiters: [a, b] }) => {
        await a.undo('never');
        assert.deepEqual(await a.peek('never'), { count: 0, resetInMs: 0 });
        await a.hit('u', LONG);
        await a.hit('u', LONG);
        await b.undo('u');
        assert.equal((await a.peek('u')).count, 1);
        await b.undo('u');
        await b.undo('u');
        const state = await a.peek('u');
        assert.equal(state.count, 0);
        assert.equal((await a.hit('u', LONG)).count, 1);
        await b.reset('u');
        assert.deepEqual(await a.peek('u'), { count: 0, resetInMs: 0 });
      }),
    );

    void it(
      'hits and undoes by an amount, never below zero',
      withEnv(async ({ limiters: [a, b] }) => {
        assert.equal((await a.hit('n', LONG, 30)).count, 30);
        assert.equal((await b.hit('n', LONG, 25)).count, 55);
        await b.undo('n', 25);
        assert.equal((await a.peek('n')).count, 30);
        await a.undo('n', 100);
        assert.equal((await a.peek('n')).count, 0);
      }),
    );
  });
}
