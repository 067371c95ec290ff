/**
 * {@link RateLimiter} on Redis, shared by every node: one key per counter under
 * `{prefix}rl:`, each operation one Lua script (atomic, one round trip), expiry Redis' own
 * `PEXPIRE`. A Redis failure is `unavailable` (503, retryable): a limit that cannot be
 * checked is not silently skipped.
 */
import type { Redis } from 'ioredis';
import type { RateCount, RateLimiter } from '../../shared/rate-limiter.js';
import { errors } from '../../shared/error-codes.js';

// KEYS[1] counter; ARGV window ms, amount. INCRBY, and open the window on the first hit (a key without
// a TTL, e.g. one written by hand, gets one too). Returns {count, ms left}.
const HIT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`;

// KEYS[1] counter. Returns {count, ms left}, {0, 0} when absent.
const PEEK = `
local n = redis.call('GET', KEYS[1])
if not n then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(n), ttl}
`;

// KEYS[1] counter; ARGV amount. Lowers only an existing counter, never below zero (never
// creates one without a TTL).
const UNDO = `
local n = redis.call('GET', KEYS[1])
if n and tonumber(n) > 0 then
  redis.call('DECRBY', KEYS[1], math.min(tonumber(n), tonumber(ARGV[1])))
end
return 0
`;

interface RateCommands {
  roomsRateHit(key: string, windowMs: number, amount: number): Promise<[number, number]>;
  roomsRatePeek(key: string): Promise<[number, number]>;
  roomsRateUndo(key: string, amount: number): Promise<number>;
}

export class RedisRateLimiter implements RateLimiter {
  readonly #redis: Redis & RateCommands;
  readonly #prefix: string;

  /** @param keyPrefix the deployment's prefix (`ROOMS_KEY_PREFIX`), e.g. `rooms:`. */
  constructor(deps: { redis: Redis; keyPrefix: string }) {
    deps.redis.defineCommand('roomsRateHit', { numberOfKeys: 1, lua: HIT });
    deps.redis.defineCommand('roomsRatePeek', { numberOfKeys: 1, lua: PEEK, readOnly: true });
    deps.redis.defineCommand('roomsRateUndo', { numberOfKeys: 1, lua: UNDO });
    this.#redis = deps.redis as Redis & RateCommands;
    this.#prefix = `${deps.keyPrefix}rl:`;
  }

  async hit(key: string, windowMs: number, amount = 1): Promise<RateCount> {
    const [count, resetInMs] = await this.#call(() =>
      this.#redis.roomsRateHit(this.#prefix + key, Math.max(1, Math.ceil(windowMs)), amount),
    );
    return { count, resetInMs };
  }

  async peek(key: string): Promise<RateCount> {
    const [count, resetInMs] = await this.#call(() =>
      this.#redis.roomsRatePeek(this.#prefix + key),
    );
    return { count, resetInMs };
  }

  async undo(key: string, amount = 1): Promise<void> {
    await this.#call(() => this.#redis.roomsRateUndo(this.#prefix + key, amount));
  }

  async reset(key: string): Promise<void> {
    await this.#call(() => this.#redis.del(this.#prefix + key));
  }

  async #call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw errors.RATE_LIMIT_UNAVAILABLE.withCause(error);
    }
  }
}
