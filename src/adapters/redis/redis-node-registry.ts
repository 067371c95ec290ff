import type { Redis } from 'ioredis';
import type { LiveNode, NodeRegistry } from '../../cell/lease.js';
import { checkTtl } from '../../cell/lease.js';
import { quitQuietly, type RedisAdapterOptions } from './redis-lease.js';

/**
 * {@link NodeRegistry} on Redis: `{prefix}room:node:{nodeId}` holds the advertise address with
 * a `PX` TTL, so a node that dies without deregistering disappears on its own.
 */
export class RedisNodeRegistry implements NodeRegistry {
  readonly #redis: Redis;
  readonly #keyPrefix: string;
  readonly #ownsConnection: boolean;
  #closed = false;

  constructor({ redis, keyPrefix, ownsConnection = false }: RedisAdapterOptions) {
    this.#redis = redis;
    this.#keyPrefix = keyPrefix;
    this.#ownsConnection = ownsConnection;
  }

  async register(nodeId: string, advertiseAddr: string, ttlMs: number): Promise<void> {
    await this.#redis.set(this.#key(nodeId), advertiseAddr, 'PX', checkTtl(ttlMs));
  }

  async deregister(nodeId: string): Promise<void> {
    await this.#redis.del(this.#key(nodeId));
  }

  async lookup(nodeId: string): Promise<string | null> {
    return this.#redis.get(this.#key(nodeId));
  }

  /** SCANs `room:node:*` (the entries are few, one per node); an entry expiring meanwhile is left out. */
  async liveNodes(): Promise<readonly LiveNode[]> {
    const head = this.#key('');
    const keys = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await this.#redis.scan(
        cursor,
        'MATCH',
        `${globEscaped(head)}*`,
        'COUNT',
        200,
      );
      for (const key of batch) keys.add(key);
      cursor = next;
    } while (cursor !== '0');
    if (keys.size === 0) return [];
    const names = [...keys];
    const addrs = await this.#redis.mget(...names);
    return names.flatMap((key, i) => {
      const advertiseAddr = addrs[i];
      return advertiseAddr ? [{ nodeId: key.slice(head.length), advertiseAddr }] : [];
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsConnection) await quitQuietly(this.#redis);
  }

  #key(nodeId: string): string {
    return `${this.#keyPrefix}room:node:${nodeId}`;
  }
}

/** `value` matched literally by a Redis glob (the key prefix may hold `*`, `?`, `[`). */
function globEscaped(value: string): string {
  return value.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
