/**
 * The media directory on a real Redis: records written by heartbeats are placed on least
 * loaded first, draining and expired ones take no room, an expired one is reported dead
 * (with the rooms it held) until forgotten, and the node's own server is the fallback.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  clusterSkipReason,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import type { MediaServerRecord } from '../../media-cluster/media-placement.js';
import { unreachableMediaServer } from '../../media-cluster/media-servers.js';
import { MediaServerKeys } from './media-server-records.js';
import { RedisMediaServers } from './redis-media-servers.js';

const skip = await clusterSkipReason();
const url = testRedisUrl();
const logger = pino({ level: 'silent' });

function record(id: string, routers: number, draining = false): MediaServerRecord {
  const load = { routers, transports: 0, producers: 0, consumers: 0, worker_cpu: [0] };
  return { id, url: `http://127.0.0.1:1/${id}`, boot: `boot-${id}`, load, draining, at_ms: 1 };
}

void describe('RedisMediaServers', { skip }, () => {
  const keyPrefix = testKeyPrefix();
  let redis: Redis;
  let keys: MediaServerKeys;
  const made: string[] = [];
  const directory = (own: string | null = null) =>
    new RedisMediaServers({
      redis,
      keyPrefix,
      client: (baseUrl) => {
        made.push(baseUrl);
        return { ...unreachableMediaServer(), close: () => undefined };
      },
      own: own === null ? null : { id: own, orchestrator: unreachableMediaServer() },
      logger,
    });

  before(() => {
    redis = new Redis(url);
    keys = new MediaServerKeys(redis, keyPrefix);
  });
  after(async () => {
    await deleteKeysWithPrefix(url, keyPrefix);
    redis.disconnect();
  });

  void it('places on the least loaded live server, never a draining one', async () => {
    await keys.beat(record('m-a', 5), 10_000, ['meeting:default:111-111-111']);
    await keys.beat(record('m-b', 1), 10_000, []);
    await keys.beat(record('m-c', 0, true), 10_000, []);
    const servers = directory();
    await servers.refresh();
    assert.deepEqual([...servers.ids()].sort(), ['m-a', 'm-b', 'm-c']);
    // m-b has 1 router against m-a's 5: four placements go there before m-a's turn.
    const placed = Array.from({ length: 5 }, () => servers.place());
    assert.deepEqual(placed, ['m-b', 'm-b', 'm-b', 'm-b', 'm-a']);
    assert.ok(!placed.includes('m-c'), 'the draining server takes no room');
    // A call reaches the server's own client, made for its registered URL.
    await servers.of('m-a').listRooms();
    assert.deepEqual(made, ['http://127.0.0.1:1/m-a']);
    servers.stop();
  });

  void it('reports an expired server dead with its rooms, and never places on it', async () => {
    await keys.beat(record('m-a', 5), 10_000);
    await keys.beat(record('m-b', 0), 300, [
      'voice_room:default:r1',
      'meeting:default:222-222-222',
    ]);
    const servers = directory();
    const dead: string[] = [];
    servers.listen({ onDead: (id) => dead.push(id) });
    await servers.refresh();
    assert.equal(servers.place(), 'm-b');
    await new Promise((resolve) => setTimeout(resolve, 450));
    await servers.refresh();
    assert.deepEqual(dead, ['m-b']);
    assert.deepEqual(servers.dead, ['m-b']);
    assert.ok(!servers.ids().includes('m-b'));
    for (let i = 0; i < 3; i++) assert.equal(servers.place(), 'm-a');
    await assert.rejects(servers.of('m-b').createRouter('meeting:default:222-222-222'), {
      code: 'MEDIA_SERVER_ERROR',
    });
    assert.deepEqual(await keys.roomsOf('m-b'), {
      boot: 'boot-m-b',
      rooms: ['voice_room:default:r1', 'meeting:default:222-222-222'],
    });
    await keys.forgetDead('m-b');
    await servers.refresh();
    assert.deepEqual(servers.dead, []);
    assert.deepEqual(await keys.roomsOf('m-b'), { boot: '', rooms: [] });
    servers.stop();
  });

  void it('falls back to the node’s own server while no registered one takes rooms', async () => {
    await keys.stop('m-a', false);
    await keys.beat(record('m-d', 0, true), 10_000);
    const servers = directory('own-media');
    await servers.refresh();
    assert.equal(servers.place(), 'own-media');
    await keys.beat(record('m-e', 3), 10_000);
    await servers.refresh();
    assert.equal(servers.place(), 'm-e');
    servers.stop();
  });

  void it('forgets the cached routers of a server restarted at the same address', async () => {
    const forgotten: string[] = [];
    const servers = new RedisMediaServers({
      redis,
      keyPrefix,
      client: (baseUrl) => ({
        ...unreachableMediaServer(),
        forgetRouters: () => forgotten.push(baseUrl),
        close: () => undefined,
      }),
      own: null,
      logger,
    });
    await keys.beat(record('m-f', 0), 10_000);
    await servers.refresh();
    servers.of('m-f').resolveRouterInfo('meeting:default:333-333-333');
    await keys.beat(record('m-f', 0), 10_000);
    await servers.refresh();
    servers.of('m-f').resolveRouterInfo('meeting:default:333-333-333');
    assert.deepEqual(forgotten, [], 'the same boot: its cache stays');

    await keys.beat({ ...record('m-f', 0), boot: 'boot-m-f-again' }, 10_000);
    await servers.refresh();
    servers.of('m-f').resolveRouterInfo('meeting:default:333-333-333');
    assert.deepEqual(forgotten, ['http://127.0.0.1:1/m-f'], 'a new boot: forgotten once');
    servers.stop();
  });
});
