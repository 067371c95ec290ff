/**
 * Failed-login limits: per account and per client address, counted in a shared
 * {@link RateLimiter} (Redis in a cluster, so every node sees every failure). Only failures
 * count: a successful login or a registration never uses up anything, so many people behind
 * one address can sign in. Once an account or an address has `limit` failures in its window,
 * every attempt for it (even with the right password) is refused with 429 until the window
 * ends, without hashing anything.
 *
 * Unknown usernames are counted like known ones: the lockout tells nothing about which
 * accounts exist. The trade-off of any per-account lockout stands: someone who knows a
 * username can keep that account locked; the per-account limit and window are settings.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { RateLimiter, RateRule } from '../shared/rate-limiter.js';
import { errors } from '../shared/error-codes.js';

export interface LoginAttempt {
  readonly appCode: string;
  /** The case-folded username (see `usernameKey`), whether or not such a user exists. */
  readonly usernameKey: string;
  /** The client's IP address; null when unknown (then only the account limit applies). */
  readonly address: string | null;
}

export interface LoginThrottleOptions {
  readonly perAccount: RateRule;
  readonly perAddress: RateRule;
}

export class LoginThrottle {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly options: LoginThrottleOptions,
  ) {}

  /**
   * Refuses an attempt whose account or address is locked.
   * @throws RateLimitedError (`LOGIN_RATE_LIMITED`) with the time left in the window.
   */
  async check(attempt: LoginAttempt): Promise<void> {
    const checks = this.#keys(attempt).map(async ({ key, rule }) => {
      const state = await this.limiter.peek(key);
      return state.count >= rule.limit ? state.resetInMs : 0;
    });
    const retryAfterMs = Math.max(0, ...(await Promise.all(checks)));
    if (retryAfterMs > 0) {
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      throw errors.LOGIN_RATE_LIMITED.after(retryAfterMs, seconds);
    }
  }

  /** Counts a wrong username or password against the account and the address. */
  async failed(attempt: LoginAttempt): Promise<void> {
    await Promise.all(
      this.#keys(attempt).map(({ key, rule }) => this.limiter.hit(key, rule.windowMs)),
    );
  }

  /**
   * A correct password clears the account's failures (its owner is back). The address keeps
   * its count: one working account must not let an address guess others' passwords freely.
   */
  async succeeded(attempt: LoginAttempt): Promise<void> {
    if (this.options.perAccount.limit > 0) await this.limiter.reset(accountKey(attempt));
  }

  #keys(attempt: LoginAttempt): { key: string; rule: RateRule }[] {
    const keys: { key: string; rule: RateRule }[] = [];
    if (this.options.perAccount.limit > 0) {
      keys.push({ key: accountKey(attempt), rule: this.options.perAccount });
    }
    if (this.options.perAddress.limit > 0 && attempt.address !== null) {
      keys.push({
        key: `login:addr:${addressKey(attempt.address)}`,
        rule: this.options.perAddress,
      });
    }
    return keys;
  }
}

/** Hashed: a login body's username is up to 256 arbitrary characters. */
function accountKey(attempt: LoginAttempt): string {
  const digest = createHash('sha256')
    .update(`${attempt.appCode}\n${attempt.usernameKey}`)
    .digest('base64url')
    .slice(0, 32);
  return `login:acct:${digest}`;
}

/**
 * The unit an address limit counts by: an IPv4 address, or the /64 network of an IPv6
 * address (one subscriber usually holds a whole /64, so single IPv6 addresses are free to
 * rotate). IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as the IPv4 address.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

function expandIpv6(address: string): string[] {
  const bare = address.split('%')[0]!; // zone index
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (`::1.2.3.4`) takes two groups; only the first four groups matter.
  const rightGroups = right.flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const missing = tail === undefined ? 0 : 8 - left.length - rightGroups.length;
  return [...left, ...Array<string>(Math.max(0, missing)).fill('0'), ...rightGroups].map((g) =>
    (parseInt(g, 16) || 0).toString(16),
  );
}
