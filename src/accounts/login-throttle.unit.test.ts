import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../adapters/memory/memory-rate-limiter.js';
import { manualTime } from '../adapters/lease.contract.js';
import { addressKey, LoginThrottle, type LoginAttempt } from './login-throttle.js';

const rules = {
  perAccount: { limit: 3, windowMs: 60_000 },
  perAddress: { limit: 5, windowMs: 60_000 },
};
const attempt = (usernameKey: string, address: string | null = '192.0.2.1'): LoginAttempt => ({
  appCode: 'default',
  usernameKey,
  address,
});

describe('LoginThrottle', () => {
  it('locks an account at its limit until the window ends, with the time left', async () => {
    const { clock, control } = manualTime();
    const throttle = new LoginThrottle(new MemoryRateLimiter({ clock }), rules);
    for (let i = 0; i < 3; i++) {
      await throttle.check(attempt('eve', `192.0.2.${i + 10}`));
      await throttle.failed(attempt('eve', `192.0.2.${i + 10}`));
    }
    await control.advance(20_000);
    await assert.rejects(throttle.check(attempt('eve', '198.51.100.1')), (error: unknown) => {
      const e = error as { kind: string; code: string; retryAfterMs: number; retryAfterS: number };
      assert.deepEqual(
        [e.kind, e.code, e.retryAfterMs, e.retryAfterS],
        ['rate_limited', 'LOGIN_RATE_LIMITED', 40_000, 40],
      );
      return true;
    });
    await throttle.check(attempt('someone-else', '198.51.100.1'));
    await control.advance(40_000);
    await throttle.check(attempt('eve', '198.51.100.1'));
  });

  it('a success clears the account, not the address', async () => {
    const { clock } = manualTime();
    const throttle = new LoginThrottle(new MemoryRateLimiter({ clock }), rules);
    for (let i = 0; i < 2; i++) await throttle.failed(attempt('bob'));
    await throttle.succeeded(attempt('bob'));
    for (let i = 0; i < 2; i++) await throttle.failed(attempt('bob', `192.0.2.${i + 50}`));
    await throttle.check(attempt('bob', '203.0.113.9')); // 2 since the success: not locked
    for (let i = 0; i < 3; i++) await throttle.failed(attempt(`other-${i}`));
    // The first address now has 2 + 3 failures.
    await assert.rejects(throttle.check(attempt('carol')), { code: 'LOGIN_RATE_LIMITED' });
  });

  it('a limit of 0 is off; an unknown address only meets the account limit', async () => {
    const { clock } = manualTime();
    const off = new LoginThrottle(new MemoryRateLimiter({ clock }), {
      perAccount: { limit: 0, windowMs: 1_000 },
      perAddress: { limit: 0, windowMs: 1_000 },
    });
    for (let i = 0; i < 20; i++) await off.failed(attempt('x'));
    await off.check(attempt('x'));
    const throttle = new LoginThrottle(new MemoryRateLimiter({ clock }), rules);
    for (let i = 0; i < 10; i++) await throttle.failed(attempt(`u${i}`, null));
    await throttle.check(attempt('fresh', null));
  });
});

describe('addressKey', () => {
  it('keeps IPv4, unwraps IPv4-mapped IPv6, and groups IPv6 by /64', () => {
    assert.equal(addressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('::FFFF:203.0.113.7'), '203.0.113.7');
    const a = addressKey('2001:db8:1:2:aaaa::1');
    assert.equal(a, '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), a);
    assert.notEqual(addressKey('2001:db8:1:3::1'), a);
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('2001:db8::'), '2001:db8:0:0::/64');
  });
});
