import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Redis } from 'ioredis';
import {
  clusterSkipReason,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { keyValueContract } from '../key-value.contract.js';
import { realTime } from '../lease.contract.js';
import { RedisKeyValue } from './redis-key-value.js';
import { AppError } from '../../shared/errors.js';

const skip = await clusterSkipReason();
const url = testRedisUrl();

// Two clients = two nodes sharing one Redis.
keyValueContract(
  'redis',
  () => {
    const keyPrefix = testKeyPrefix();
    const clients = [new Redis(url), new Redis(url)] as const;
    return Promise.resolve({
      stores: [
        new RedisKeyValue({ redis: clients[0], keyPrefix }),
        new RedisKeyValue({ redis: clients[1], keyPrefix }),
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
  'redis key-value: keys live under the prefix; a dead Redis is `unavailable`',
  { skip },
  async () => {
    const keyPrefix = testKeyPrefix();
    const redis = new Redis(url);
    try {
      await new RedisKeyValue({ redis, keyPrefix }).incr('meeting:pwd:a', 60_000);
      assert.equal(await redis.get(`${keyPrefix}kv:meeting:pwd:a`), '1');
      assert.ok((await redis.pttl(`${keyPrefix}kv:meeting:pwd:a`)) > 0);
    } finally {
      await deleteKeysWithPrefix(url, keyPrefix);
      redis.disconnect();
    }
    const dead = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    dead.on('error', () => undefined);
    await assert.rejects(
      new RedisKeyValue({ redis: dead, keyPrefix }).get('x'),
      (e: unknown) => e instanceof AppError && e.kind === 'unavailable',
    );
    dead.disconnect();
  },
);
