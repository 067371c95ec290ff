import assert from 'node:assert/strict';
import { it } from 'node:test';
import { manualTime } from '../lease.contract.js';
import { rateLimiterContract } from '../rate-limiter.contract.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';

rateLimiterContract('memory', () => {
  const { clock, control } = manualTime();
  const limiter = new MemoryRateLimiter({ clock });
  return Promise.resolve({ limiters: [limiter, limiter], clock: control, cleanup: async () => {} });
});

void it('memory rate limiter drops expired windows, so abandoned keys cost no memory', async () => {
  const { clock, control } = manualTime();
  const limiter = new MemoryRateLimiter({ clock });
  for (let i = 0; i < 1_000; i++) await limiter.hit(`attacker-${i}`, 1_000);
  await control.advance(1_001);
  for (let i = 0; i < 100; i++) await limiter.hit(`later-${i}`, 1_000);
  assert.ok(limiter.size <= 100, `${limiter.size} windows kept`);
});
