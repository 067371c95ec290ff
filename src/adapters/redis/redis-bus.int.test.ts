import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  clusterSkipReason,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { silentLogger } from '../../cell/testing/harness.js';
import { RedisRealtimeBus } from './redis-bus.js';

const until = async (check: () => boolean, timeoutMs = 3_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

void describe('Redis realtime bus', { skip: await clusterSkipReason() }, () => {
  const prefix = testKeyPrefix();
  let nodeA: RedisRealtimeBus;
  let nodeB: RedisRealtimeBus;

  before(() => {
    nodeA = RedisRealtimeBus.connect(testRedisUrl(), prefix, silentLogger);
    nodeB = RedisRealtimeBus.connect(testRedisUrl(), prefix, silentLogger);
  });
  after(async () => {
    await nodeA.close();
    await nodeB.close();
    await deleteKeysWithPrefix(testRedisUrl(), prefix);
  });

  void it('carries one node’s messages to another node in publish order', async () => {
    const got: string[] = [];
    const unsubscribe = await nodeB.subscribe('rt:room:app:r', (p) => got.push(p.toString()));
    const sent = Array.from({ length: 2_000 }, (_, i) => `m${i}`);
    await Promise.all(sent.map((m) => nodeA.publish('rt:room:app:r', m)));
    await until(() => got.length === sent.length);
    assert.deepEqual(got, sent);
    await unsubscribe();
  });

  void it('subscribes a shared channel once and keeps it while one handler remains', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const u1 = await nodeB.subscribe('rt:room:app:s', (p) => first.push(p.toString()));
    const u2 = await nodeB.subscribe('rt:room:app:s', (p) => second.push(p.toString()));
    await nodeA.publish('rt:room:app:s', 'both');
    await until(() => first.length === 1 && second.length === 1);
    await u1();
    await nodeA.publish('rt:room:app:s', 'one');
    await until(() => second.length === 2);
    assert.deepEqual(first, ['both']);
    await u2();
    // Unsubscribed for real: a fresh subscriber on the same node sees only what follows.
    const third: string[] = [];
    await nodeA.publish('rt:room:app:s', 'nobody');
    const u3 = await nodeB.subscribe('rt:room:app:s', (p) => third.push(p.toString()));
    await nodeA.publish('rt:room:app:s', 'again');
    await until(() => third.length === 1);
    assert.deepEqual([second, third], [['both', 'one'], ['again']]);
    await u3();
  });
});
