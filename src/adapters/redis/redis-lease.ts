import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  checkTtl,
  type EnsureOwnerResult,
  type LeaseManager,
  type RenewResult,
} from '../../cell/lease.js';

// The value of `{prefix}lease:{route}` is `nodeId + "\n" + token`: one plain string keeps every
// operation a single GET/SET (no hash + PEXPIRE pair) and readable with redis-cli. Node ids
// therefore must not contain "\n"; tokens are UUIDs. A value without "\n" (written by hand) is
// read as a holder with no valid token.
const SPLIT = `
local function split(v)
  local nl = string.find(v, '\\n', 1, true)
  if nl == nil then return v, nil end
  return string.sub(v, 1, nl - 1), string.sub(v, nl + 1)
end
`;

// KEYS[1] lease key; ARGV nodeId, fresh token, ttl ms. Returns {1, token} or {0, holder}.
const ENSURE_OWNER = `${SPLIT}
local v = redis.call('GET', KEYS[1])
if v then
  local holder = split(v)
  if holder ~= ARGV[1] then return {0, holder} end
end
redis.call('SET', KEYS[1], ARGV[1] .. '\\n' .. ARGV[2], 'PX', ARGV[3])
return {1, ARGV[2]}
`;

// KEYS[1] lease key; ARGV held token, fresh token, ttl ms. Compare-and-extend: returns
// {1, token} when the held token was current, else {0, holder} or {0} when the key is gone
// (never granted again here: see LeaseManager.renew).
const RENEW = `${SPLIT}
local v = redis.call('GET', KEYS[1])
if not v then return {0} end
local holder, token = split(v)
if token ~= ARGV[1] then return {0, holder} end
redis.call('SET', KEYS[1], holder .. '\\n' .. ARGV[2], 'PX', ARGV[3])
return {1, ARGV[2]}
`;

// KEYS[1] lease key; ARGV token. Returns 1 when the token is current.
const VERIFY_OWNER = `${SPLIT}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local _, token = split(v)
if token == ARGV[1] then return 1 end
return 0
`;

// KEYS[1] lease key; ARGV token. Compare-and-delete; returns 1 when it deleted.
const RELEASE = `${SPLIT}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local _, token = split(v)
if token ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;

// KEYS[1] lease key. Returns the holder's node id or nil.
const OWNER_OF = `${SPLIT}
local v = redis.call('GET', KEYS[1])
if not v then return false end
return (split(v))
`;

// Namespaced so they cannot clash with scripts other adapters define on a shared client.
interface LeaseCommands {
  roomsLeaseEnsureOwner(
    key: string,
    nodeId: string,
    token: string,
    ttlMs: number,
  ): Promise<[number, string]>;
  roomsLeaseRenew(
    key: string,
    token: string,
    fresh: string,
    ttlMs: number,
  ): Promise<[number, string?]>;
  roomsLeaseVerifyOwner(key: string, token: string): Promise<number>;
  roomsLeaseRelease(key: string, token: string): Promise<number>;
  roomsLeaseOwnerOf(key: string): Promise<string | null>;
}

export interface RedisAdapterOptions {
  readonly redis: Redis;
  /** Prepended to every key, e.g. `rooms:`; lets tests and deployments share one Redis. */
  readonly keyPrefix: string;
  /** True when this adapter alone uses `redis`, so `close()` may quit it. Default false. */
  readonly ownsConnection?: boolean;
}

/**
 * {@link LeaseManager} on Redis: each operation is one Lua script sent with EVALSHA (ioredis
 * `defineCommand` falls back to EVAL on NOSCRIPT, e.g. after a restart or SCRIPT FLUSH), so each
 * is atomic and one round trip. Expiry is Redis' own `PX`.
 */
export class RedisLeaseManager implements LeaseManager {
  readonly #redis: Redis & LeaseCommands;
  readonly #keyPrefix: string;
  readonly #ownsConnection: boolean;
  #closed = false;

  constructor({ redis, keyPrefix, ownsConnection = false }: RedisAdapterOptions) {
    redis.defineCommand('roomsLeaseEnsureOwner', { numberOfKeys: 1, lua: ENSURE_OWNER });
    redis.defineCommand('roomsLeaseRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('roomsLeaseVerifyOwner', {
      numberOfKeys: 1,
      lua: VERIFY_OWNER,
      readOnly: true,
    });
    redis.defineCommand('roomsLeaseRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('roomsLeaseOwnerOf', { numberOfKeys: 1, lua: OWNER_OF, readOnly: true });
    this.#redis = redis as Redis & LeaseCommands;
    this.#keyPrefix = keyPrefix;
    this.#ownsConnection = ownsConnection;
  }

  async ensureOwner(route: string, nodeId: string, ttlMs: number): Promise<EnsureOwnerResult> {
    const ttl = checkTtl(ttlMs);
    if (nodeId.includes('\n')) throw new RangeError('nodeId must not contain a newline');
    const [granted, value] = await this.#redis.roomsLeaseEnsureOwner(
      this.#key(route),
      nodeId,
      randomUUID(),
      ttl,
    );
    return granted === 1 ? { granted: true, token: value } : { granted: false, ownerNodeId: value };
  }

  async renew(route: string, token: string, ttlMs: number): Promise<RenewResult> {
    const ttl = checkTtl(ttlMs);
    const [renewed, value] = await this.#redis.roomsLeaseRenew(
      this.#key(route),
      token,
      randomUUID(),
      ttl,
    );
    return renewed === 1 && value !== undefined
      ? { renewed: true, token: value }
      : { renewed: false, ownerNodeId: value ?? null };
  }

  async verifyOwner(route: string, token: string): Promise<boolean> {
    return (await this.#redis.roomsLeaseVerifyOwner(this.#key(route), token)) === 1;
  }

  async release(route: string, token: string): Promise<boolean> {
    return (await this.#redis.roomsLeaseRelease(this.#key(route), token)) === 1;
  }

  async ownerOf(route: string): Promise<string | null> {
    return this.#redis.roomsLeaseOwnerOf(this.#key(route));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsConnection) await quitQuietly(this.#redis);
  }

  #key(route: string): string {
    return `${this.#keyPrefix}lease:${route}`;
  }
}

/** Quits a connection that may already have ended (quit would then reject). */
export async function quitQuietly(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
