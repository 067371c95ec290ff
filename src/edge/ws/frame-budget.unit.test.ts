import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameBudget } from './frame-budget.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('FrameBudget', () => {
  it('allows a burst, then the refill rate', () => {
    let now = 0;
    const budget = new FrameBudget({ ratePerSecond: 10, burst: 5, maxInFlight: 100 }, () => now);
    for (let i = 0; i < 5; i++) assert.equal(budget.take(), true);
    assert.equal(budget.take(), false);
    now += 100; // one token
    assert.equal(budget.take(), true);
    assert.equal(budget.take(), false);
    now += 10_000; // refills to the burst, not beyond
    for (let i = 0; i < 5; i++) assert.equal(budget.take(), true);
    assert.equal(budget.take(), false);
  });

  it('runs at most maxInFlight tasks, the next in order, and refuses past `burst` waiting', async () => {
    const budget = new FrameBudget({ ratePerSecond: 1, burst: 3, maxInFlight: 2 }, () => 0);
    const started: number[] = [];
    const release: (() => void)[] = [];
    const task = (i: number) => () =>
      new Promise<void>((resolve) => {
        started.push(i);
        release.push(resolve);
      });
    for (let i = 0; i < 5; i++) assert.equal(budget.run(task(i)), true);
    assert.equal(budget.run(task(5)), false, 'the waiting line is full');
    assert.deepEqual([started, budget.inFlight, budget.waiting], [[0, 1], 2, 3]);
    release[0]!();
    await tick();
    assert.deepEqual(started, [0, 1, 2]);
    budget.clear();
    for (const r of release) r();
    await tick();
    assert.deepEqual([started, budget.inFlight, budget.waiting], [[0, 1, 2], 0, 0]);
    // A failing task frees its slot too.
    assert.equal(
      budget.run(() => Promise.reject(new Error('x'))),
      true,
    );
    await tick();
    assert.equal(budget.inFlight, 0);
  });
});
