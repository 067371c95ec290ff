import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Redis } from 'ioredis';
import {
  clusterSkipReason,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { realTime } from '../lease.contract.js';
import { rateLimiterContract } from '../rate-limiter.contract.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';

const skip = await clusterSkipReason();
const url = testRedisUrl();

// Two clients = two nodes sharing one Redis.
rateLimiterContract(
  'redis',
  () => {
    const keyPrefix = testKeyPrefix();
    const clients = [new Redis(url), new Redis(url)] as const;
    return Promise.resolve({
      limiters: [
        new RedisRateLimiter({ redis: clients[0], keyPrefix }),
        new RedisRateLimiter({ redis: clients[1], keyPrefix }),
      ],
      clock: realTime(400),
      cleanup: async () => {
        await deleteKeysWithPrefix(url, keyPrefix);
        for (const c of clients) c.disconnect();
      },
    });
  },
  { skip },
);

void it(
  'redis rate limiter: keys live under the prefix; a dead Redis is `unavailable`',
  { skip },
  async () => {
    const keyPrefix = testKeyPrefix();
    const redis = new Redis(url);
    try {
      await new RedisRateLimiter({ redis, keyPrefix }).hit('login:x', 60_000);
      assert.equal(await redis.get(`${keyPrefix}rl:login:x`), '1');
      const pttl = await redis.pttl(`${keyPrefix}rl:login:x`);
      assert.ok(pttl > 0 && pttl <= 60_000, `${pttl}`);
    } finally {
      await deleteKeysWithPrefix(url, keyPrefix);
      redis.disconnect();
    }
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    dead.on('error', () => undefined);
    try {
      await assert.rejects(new RedisRateLimiter({ redis: dead, keyPrefix }).hit('k', 1_000), {
        kind: 'unavailable',
        code: 'RATE_LIMIT_UNAVAILABLE',
      });
    } finally {
      dead.disconnect();
    }
  },
);
