import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkGate } from './work-gate.js';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('WorkGate', () => {
  it('runs at most `concurrency` tasks at once, the rest in arrival order', async () => {
    const gate = new WorkGate(2, 10);
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    const blockers = Array.from({ length: 6 }, deferred);
    const runs = blockers.map((b, i) =>
      gate.run(async () => {
        active += 1;
        peak = Math.max(peak, active);
        order.push(i);
        await b.promise;
        active -= 1;
        return i;
      }),
    );
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([gate.running, gate.queued], [2, 4]);
    for (const b of blockers) {
      b.resolve();
      await new Promise((r) => setImmediate(r));
    }
    assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3, 4, 5]);
    assert.equal(peak, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual([gate.running, gate.queued], [0, 0]);
  });

  it('refuses with `unavailable` past the queue bound, and frees slots of failed tasks', async () => {
    const gate = new WorkGate(1, 1);
    const block = deferred();
    const first = gate.run(() => block.promise);
    const second = gate.run(() => Promise.reject(new Error('boom')));
    await assert.rejects(
      gate.run(() => Promise.resolve()),
      { kind: 'unavailable', code: 'BUSY' },
    );
    block.resolve();
    await first;
    await assert.rejects(second, /boom/);
    assert.equal(await gate.run(() => Promise.resolve('after')), 'after');
    assert.deepEqual([gate.running, gate.queued], [0, 0]);
  });

  it('rejects nonsensical bounds', () => {
    assert.throws(() => new WorkGate(0, 1), RangeError);
    assert.throws(() => new WorkGate(1, -1), RangeError);
  });
});
