import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { routeKey } from '../../cell/lease.js';
import {
  clusterSkipReason,
  deleteKeysWithPrefix,
  startPrivateRedis,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { leaseContract, realTime } from '../lease.contract.js';
import { RedisLeaseManager } from './redis-lease.js';
import { RedisNodeRegistry } from './redis-node-registry.js';

const skip = await clusterSkipReason();
const url = testRedisUrl();

// 600 ms keeps the contract's margins (ttl/3 and 2ttl/3 sleeps) far above Redis' ms precision.
leaseContract(
  'redis',
  () => {
    const keyPrefix = testKeyPrefix();
    const redis = new Redis(url);
    return Promise.resolve({
      lease: new RedisLeaseManager({ redis, keyPrefix }),
      registry: new RedisNodeRegistry({ redis, keyPrefix }),
      clock: realTime(600),
      cleanup: async () => {
        await deleteKeysWithPrefix(url, keyPrefix);
        redis.disconnect();
      },
    });
  },
  { skip },
);

void describe('redis lease adapter specifics', { skip }, () => {
  const keyPrefix = testKeyPrefix();
  let redis: Redis;
  before(() => {
    redis = new Redis(url);
  });
  after(async () => {
    await deleteKeysWithPrefix(url, keyPrefix);
    redis.disconnect();
  });

  void it('stores `nodeId\\ntoken` under {prefix}lease:{route} with a PX TTL', async () => {
    const lease = new RedisLeaseManager({ redis, keyPrefix });
    const r = await lease.ensureOwner(routeKey({ appCode: 'voice', roomId: 'k' }), 'node-a', 5_000);
    assert.ok(r.granted);
    const key = `${keyPrefix}lease:voice\u0000k`;
    assert.equal(await redis.get(key), `node-a\n${r.token}`);
    const pttl = await redis.pttl(key);
    assert.ok(pttl > 4_000 && pttl <= 5_000, `pttl ${pttl}`);

    const registry = new RedisNodeRegistry({ redis, keyPrefix });
    await registry.register('node-a', 'h:1', 5_000);
    assert.equal(await redis.get(`${keyPrefix}room:node:node-a`), 'h:1');
    assert.ok((await redis.pttl(`${keyPrefix}room:node:node-a`)) > 4_000);
  });

  // SCRIPT FLUSH is server-wide, so it runs on a private server, not the shared one.
  void it('keeps working after the server forgets its scripts (NOSCRIPT)', async (t) => {
    const server = await startPrivateRedis();
    t.after(() => server.stop());
    const own = new Redis(server.url);
    t.after(() => own.disconnect());
    const lease = new RedisLeaseManager({ redis: own, keyPrefix });
    const route = routeKey({ appCode: 'voice', roomId: 'noscript' });
    assert.ok((await lease.ensureOwner(route, 'node-a', 5_000)).granted);
    await own.script('FLUSH');
    const renewed = await lease.ensureOwner(route, 'node-a', 5_000);
    assert.ok(renewed.granted);
    assert.equal(await lease.verifyOwner(route, renewed.token), true);
    assert.equal(await lease.ownerOf(route), 'node-a');
    assert.equal(await lease.release(route, renewed.token), true);
  });

  void it('close quits the connection only when it owns it', async () => {
    const borrowed = new RedisLeaseManager({ redis, keyPrefix });
    await borrowed.close();
    assert.equal(await redis.ping(), 'PONG');

    const own = new Redis(url);
    const owning = new RedisLeaseManager({ redis: own, keyPrefix, ownsConnection: true });
    const registry = new RedisNodeRegistry({ redis: own, keyPrefix, ownsConnection: true });
    assert.equal(await owning.ownerOf(routeKey({ appCode: 'x', roomId: 'y' })), null);
    await owning.close();
    await owning.close();
    await registry.close();
    assert.equal(own.status, 'end');
  });
});
