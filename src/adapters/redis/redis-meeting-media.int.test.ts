import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import {
  clusterSkipReason,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { realTime } from '../lease.contract.js';
import { meetingMediaContract } from '../meeting-media.contract.js';
import { MEETING_MEDIA_TTL_MS } from '../memory/memory-meeting-media.js';
import { RedisRoomMediaState } from './redis-meeting-media.js';

const skip = await clusterSkipReason();
const url = testRedisUrl();

meetingMediaContract(
  'redis',
  () => {
    const keyPrefix = testKeyPrefix();
    const redis = new Redis(url);
    return Promise.resolve({
      state: new RedisRoomMediaState({ redis, keyPrefix, ttlMs: 600 }),
      clock: realTime(600),
      cleanup: async () => {
        await deleteKeysWithPrefix(url, keyPrefix);
        redis.disconnect();
      },
    });
  },
  { skip },
);

void describe('redis meeting media specifics', { skip }, () => {
  const keyPrefix = testKeyPrefix();
  let redis: Redis;
  before(() => {
    redis = new Redis(url);
  });
  after(async () => {
    await deleteKeysWithPrefix(url, keyPrefix);
    redis.disconnect();
  });

  void it('keeps a user’s set under {prefix}meeting:resources:{app}:{room}:{user} with a 1 h PEXPIRE', async () => {
    const state = new RedisRoomMediaState({ redis, keyPrefix });
    const meeting = { appCode: 'app', roomId: '835-000-036' };
    await state.addTransport(meeting, '16', { id: 't1', direction: 'send' });
    await state.addProducer(meeting, '16', { id: 'p1', kind: 'audio' });
    const key = `${keyPrefix}meeting:resources:app:835-000-036:16`;
    assert.deepEqual(await redis.hgetall(key), { 't:t1': 'send', 'p:p1': 'audio' });
    const ttl = await redis.pttl(key);
    assert.ok(ttl > MEETING_MEDIA_TTL_MS - 60_000 && ttl <= MEETING_MEDIA_TTL_MS, String(ttl));
    const live = await redis.pttl(`${keyPrefix}meeting:producers:app:835-000-036`);
    assert.ok(live > 0 && live <= MEETING_MEDIA_TTL_MS, String(live));
  });

  void it('answers unavailable when Redis cannot be reached', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    dead.on('error', () => undefined);
    const state = new RedisRoomMediaState({ redis: dead, keyPrefix });
    const meeting = { appCode: 'app', roomId: '835-000-036' };
    for (const attempt of [
      state.addTransport(meeting, '16', { id: 't1', direction: 'send' }),
      state.resources(meeting, '16'),
      state.clear(meeting, '16'),
    ]) {
      const error = (await attempt.catch((e: unknown) => e)) as { kind?: string; code?: string };
      assert.deepEqual([error.kind, error.code], ['unavailable', 'MEDIA_STATE_UNAVAILABLE']);
    }
    dead.disconnect();
  });
});
