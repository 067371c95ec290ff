import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interleave, type LoadResult } from './load.js';

const result = (perSecond: number): LoadResult => ({
  ops: perSecond,
  errors: 0,
  seconds: 1,
  perSecond,
  p50Ms: 1,
  p99Ms: 2,
});

describe('interleave', () => {
  it('swaps which side runs first each round', async () => {
    const order: string[] = [];
    await interleave(
      4,
      () => (order.push('a'), Promise.resolve(result(1))),
      () => (order.push('b'), Promise.resolve(result(1))),
    );
    assert.deepEqual(order, ['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a']);
  });

  it('is the median of per-pair ratios, so one busy pair does not skew it', async () => {
    // Pair 2 ran while the machine was busy for both sides: its rates are low, its ratio not.
    const a = [100, 20, 100, 100, 100];
    const b = [90, 18, 91, 89, 92];
    let i = 0;
    let j = 0;
    const r = await interleave(
      5,
      () => Promise.resolve(result(a[i++]!)),
      () => Promise.resolve(result(b[j++]!)),
    );
    assert.deepEqual(
      r.ratios.map((x) => x.toFixed(2)),
      ['0.90', '0.90', '0.91', '0.89', '0.92'],
    );
    assert.equal(r.ratio.toFixed(2), '0.90');
    assert.equal(r.a.length, 5);
    assert.equal(r.b[1]?.perSecond, 18);
  });
});
