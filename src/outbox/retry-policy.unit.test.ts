import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { exhausted, retryDelayMs } from './retry-policy.js';

const policy = { baseMs: 1_000, maxMs: 60_000, maxAttempts: 5 };

void describe('retry policy', () => {
  void it('doubles the delay per attempt up to the cap, with jitter in the upper half', () => {
    const low = () => 0;
    const high = () => 0.999999;
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => retryDelayMs(policy, n, low)),
      [500, 1_000, 2_000, 4_000],
    );
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => retryDelayMs(policy, n, high)),
      [1_000, 2_000, 4_000, 8_000],
    );
    assert.equal(retryDelayMs(policy, 30, high), 60_000);
    assert.equal(retryDelayMs(policy, 1_000, low), 30_000);
  });

  void it('always stays within [ceiling / 2, ceiling]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 0.9999, noNaN: true }),
        (n, r) => {
          const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 52));
          const delay = retryDelayMs(policy, n, () => r);
          return delay >= ceiling / 2 - 1 && delay <= ceiling + 1;
        },
      ),
    );
  });

  void it('gives up after maxAttempts', () => {
    assert.deepEqual(
      [1, 4, 5, 6].map((n) => exhausted(policy, n)),
      [false, false, true, true],
    );
  });
});
