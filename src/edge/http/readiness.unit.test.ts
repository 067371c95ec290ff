/**
 * `/readyz`'s rules: draining or no database is not ready; no Redis is ready but degraded;
 * each probe runs at most once per cache period however many checks arrive, a probe that
 * hangs counts as down, and a dependency that answers again is up at the next period.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Readiness, type ReadinessProbes } from './readiness.js';

type Service = ReturnType<ReadinessProbes['service']>;

function fixture(options: { timeoutMs?: number } = {}) {
  let now = 0;
  const state = {
    database: 'up' as 'up' | 'down' | 'hang',
    redis: 'up' as 'up' | 'down' | 'hang',
    service: 'serving' as Service,
    calls: { database: 0, redis: 0 },
  };
  const answer = (s: 'up' | 'down' | 'hang') =>
    s === 'up'
      ? Promise.resolve()
      : s === 'down'
        ? Promise.reject(new Error('refused'))
        : new Promise<never>(() => undefined);
  const readiness = new Readiness(
    {
      database: () => (state.calls.database++, answer(state.database)),
      redis: () => (state.calls.redis++, answer(state.redis)),
      service: () => state.service,
    },
    { timeoutMs: options.timeoutMs ?? 20, cacheMs: 1_000, nowMs: () => now },
  );
  return {
    state,
    readiness,
    advance: (ms: number) => (now += ms),
  };
}

describe('readiness', () => {
  it('is ready with every check up', async () => {
    const { readiness } = fixture();
    assert.deepEqual(await readiness.check(), {
      ready: true,
      status: 'ready',
      checks: { database: 'up', redis: 'up', service: 'serving' },
    });
  });

  it('is not ready while the node drains, whatever its dependencies say', async () => {
    const f = fixture();
    for (const service of ['draining', 'drained', 'stopping'] as const) {
      f.state.service = service;
      const report = await f.readiness.check();
      assert.deepEqual(
        [report.ready, report.status, report.checks.service],
        [false, 'draining', service],
      );
    }
  });

  it('is not ready without a database, and a hanging one counts as down', async () => {
    const f = fixture();
    f.state.database = 'down';
    assert.deepEqual(
      [(await f.readiness.check()).ready, (await f.readiness.check()).status],
      [false, 'unavailable'],
    );
    f.advance(1_000);
    f.state.database = 'hang';
    const report = await f.readiness.check();
    assert.deepEqual([report.ready, report.checks.database], [false, 'down']);
  });

  it('stays ready without Redis, reported degraded, and is ready again once Redis answers', async () => {
    const f = fixture();
    f.state.redis = 'hang';
    const down = await f.readiness.check();
    assert.deepEqual([down.ready, down.status, down.checks.redis], [true, 'degraded', 'down']);
    f.state.redis = 'up';
    f.advance(250); // a "down" is kept a quarter of the period
    const back = await f.readiness.check();
    assert.deepEqual([back.ready, back.status, back.checks.redis], [true, 'ready', 'up']);
  });

  it('probes each dependency once per period however many checks arrive', async () => {
    const f = fixture({ timeoutMs: 50 });
    await Promise.all(Array.from({ length: 100 }, () => f.readiness.check()));
    assert.deepEqual(f.state.calls, { database: 1, redis: 1 });
    f.advance(999);
    await Promise.all(Array.from({ length: 100 }, () => f.readiness.check()));
    assert.deepEqual(f.state.calls, { database: 1, redis: 1 });
    // A new period; checks that arrive while its probe is in flight share it.
    f.advance(1);
    f.state.database = 'hang';
    await Promise.all(Array.from({ length: 100 }, () => f.readiness.check()));
    assert.deepEqual(f.state.calls, { database: 2, redis: 2 });
  });

  it('reports Redis as not used on a node without it', async () => {
    const readiness = new Readiness({
      database: () => Promise.resolve(),
      service: () => 'serving',
    });
    assert.deepEqual(await readiness.check(), {
      ready: true,
      status: 'ready',
      checks: { database: 'up', redis: 'not_used', service: 'serving' },
    });
  });
});
