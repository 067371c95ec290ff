import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryPeaks, touchAll } from './rooms-touch.js';

describe('rooms load', () => {
  it('touches every room exactly once, at most `concurrency` at a time', async () => {
    const touched: number[] = [];
    let inFlight = 0;
    let most = 0;
    const latencies = await touchAll(50, 8, async (i) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      touched.push(i);
      inFlight -= 1;
    });
    assert.deepEqual(
      [...touched].sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i),
    );
    assert.equal(most, 8);
    assert.equal(latencies.length, 50);
    assert.deepEqual(
      latencies,
      [...latencies].sort((a, b) => a - b),
    );
  });

  it('fails when a touch fails', async () => {
    await assert.rejects(
      touchAll(5, 2, (i) => (i === 3 ? Promise.reject(new Error('down')) : Promise.resolve())),
      /down/,
    );
  });

  it('keeps the highest RSS and loaded-cell count sampled', () => {
    let rss = 0;
    let loaded = 0;
    const peaks = new MemoryPeaks(
      () => loaded,
      () => rss,
    );
    for (const [r, l] of [
      [100, 10],
      [150, 30],
      [140, 40],
    ] as const) {
      rss = r;
      loaded = l;
      peaks.sample();
    }
    assert.equal(peaks.rssPeak, 150);
    assert.equal(peaks.loadedPeak, 40);
  });
});
