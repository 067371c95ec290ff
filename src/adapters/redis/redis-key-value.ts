/**
 * {@link KeyValue} on Redis, shared by every node: keys under `{prefix}kv:`, each operation
 * one command or one Lua script (atomic, one round trip), expiry Redis' own. A Redis
 * failure is `unavailable` (503, retryable): a lockout that cannot be checked is not
 * silently skipped.
 */
import type { Redis } from 'ioredis';
import type { KeyValue } from '../../shared/key-value.js';
import { errors } from '../../shared/error-codes.js';

// KEYS[1] counter; ARGV ttl ms. INCR and (re)set the TTL in one step.
const INCR = `
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n
`;

// KEYS[1] key; ARGV max ttl ms. GET, and lower the TTL to the cap (never raise it).
const GET_CAPPING_TTL = `
local v = redis.call('GET', KEYS[1])
if not v then return false end
local t = redis.call('PTTL', KEYS[1])
if t < 0 or t > tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return v
`;

interface KvCommands {
  roomsKvIncr(key: string, ttlMs: number): Promise<number>;
  roomsKvGetCappingTtl(key: string, maxTtlMs: number): Promise<string | null>;
}

export class RedisKeyValue implements KeyValue {
  readonly #redis: Redis & KvCommands;
  readonly #prefix: string;

  /** @param keyPrefix the deployment's prefix (`ROOMS_KEY_PREFIX`), e.g. `rooms:`. */
  constructor(deps: { redis: Redis; keyPrefix: string }) {
    deps.redis.defineCommand('roomsKvIncr', { numberOfKeys: 1, lua: INCR });
    deps.redis.defineCommand('roomsKvGetCappingTtl', { numberOfKeys: 1, lua: GET_CAPPING_TTL });
    this.#redis = deps.redis as Redis & KvCommands;
    this.#prefix = `${deps.keyPrefix}kv:`;
  }

  get(key: string): Promise<string | null> {
    return this.#call(() => this.#redis.get(this.#prefix + key));
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.#call(() => this.#redis.set(this.#prefix + key, value, 'PX', ttl(ttlMs)));
  }

  async del(key: string): Promise<void> {
    await this.#call(() => this.#redis.del(this.#prefix + key));
  }

  incr(key: string, ttlMs: number): Promise<number> {
    return this.#call(() => this.#redis.roomsKvIncr(this.#prefix + key, ttl(ttlMs)));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    const set = await this.#call(() =>
      this.#redis.set(this.#prefix + key, value, 'PX', ttl(ttlMs), 'NX'),
    );
    return set === 'OK';
  }

  getCappingTtl(key: string, maxTtlMs: number): Promise<string | null> {
    return this.#call(() => this.#redis.roomsKvGetCappingTtl(this.#prefix + key, ttl(maxTtlMs)));
  }

  async #call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw errors.KEY_VALUE_UNAVAILABLE.withCause(error);
    }
  }
}

function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
