/**
 * A node that dies leaves its sockets' media on the media server: another node releases it.
 * Two rooms nodes on MariaDB + Redis and one registered media server; a member's socket on
 * the node in a child process makes transports, a producer and a consumer; the child is
 * killed with SIGKILL; the member comes back through the other node. What the dead node's
 * socket made is closed on the media server (the producer announced closed to the room, the
 * records forgotten) while what the member made since stays.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { meetingClient, type MeetingClient } from '../meeting/api/testing/meeting-client.js';
import { TestClient, type Frame } from '../edge/ws/testing/ws-client.js';
import { mediaSkipReason, opusRtpParameters } from '../media-server/testing/harness.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  freePort,
  testKeyPrefix,
  testRedisUrl,
} from '../testing/backends.js';
import { reportingOutput, ServerProcess, waitForHealthy } from '../testing/server-process.js';
import { loadConfig } from '../main/config.js';
import { startNode, type RoomsNode } from '../main/node.js';
import {
  clusterNodeEnv,
  mediaStats,
  spawnMediaServer,
  type RegisteredMediaServer,
} from '../main/testing/media-cluster.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();
const HOLDER_TTL_MS = '1500';

void describe('a dead node’s media', { skip, timeout: 180_000 }, () => {
  const keyPrefix = testKeyPrefix();
  const redisUrl = testRedisUrl();
  let redis: Redis;
  let media: RegisteredMediaServer;
  let survivor: RoomsNode;
  let doomed: ServerProcess;
  let doomedUrl = '';
  let api: MeetingClient;
  let drop: () => Promise<void> = () => Promise.resolve();
  const sockets: TestClient[] = [];

  const ok = (ack: Frame) => {
    assert.equal(ack.code, 0, ack.message);
    return ack.data;
  };
  const socket = async (base: string, who: string) => {
    const client = await TestClient.connect(
      `${base.replace(/^http/, 'ws')}/ws?token=${api.tokens[who]}`,
    );
    sockets.push(client);
    return client;
  };
  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await sleep(100);
    }
    assert.fail(
      `timed out: ${what}; media server holds ${JSON.stringify(await mediaStats(media))}`,
    );
  };

  before(async () => {
    redis = new Redis(redisUrl);
    media = await spawnMediaServer({
      id: 'media-a',
      redisUrl,
      keyPrefix,
      rtcPorts: [46000, 46999],
    });
    const database = await createTestDatabase();
    drop = () => database.drop();
    const env = (nodeId: string, extra: Record<string, string> = {}) =>
      clusterNodeEnv({
        nodeId,
        databaseUrl: database.url,
        redisUrl,
        keyPrefix,
        own: media,
        extra: { ROOMS_MEDIA_HOLDER_TTL_MS: HOLDER_TTL_MS, ...extra },
      });
    survivor = await startNode(loadConfig(env('orphan-survivor')));
    const port = await freePort();
    doomedUrl = `http://127.0.0.1:${port}`;
    doomed = new ServerProcess(
      'orphan-doomed',
      env('orphan-doomed', { ROOMS_HTTP_PORT: String(port) }),
    );
    await reportingOutput([doomed], async () => {
      await waitForHealthy(doomed, doomedUrl, 60_000);
    });
    api = meetingClient(() => survivor.http);
    await api.users(['ann', 'ben']);
  });
  after(async () => {
    for (const s of sockets) s.close();
    await survivor?.close();
    await Promise.all([doomed?.stop(), media?.process.stop()]);
    await deleteKeysWithPrefix(redisUrl, keyPrefix).catch(() => 0);
    redis?.disconnect();
    await drop();
  });

  void it('is released by another node; what the member made since stays', async () => {
    await reportingOutput([doomed, media.process], async () => {
      const created = await api.call('POST', '/meeting/rooms', { as: 'ann', body: { title: 'o' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const code = created.body.data.room.room_code as string;
      const caps = created.body.data.rtp_capabilities;
      await api.call('POST', `/meeting/rooms/${code}/join`, { as: 'ben', body: {} });
      const room = { room_code: code };

      // ben on the survivor produces; ann, on the doomed node, produces and consumes ben.
      const ben = await socket(survivor.httpAddress, 'ben');
      ok(await ben.request('meeting.room.join', room));
      const benSend = ok(
        await ben.request('meeting.transport.create', { ...room, direction: 'send' }),
      );
      const produce = (client: TestClient, transport: unknown, ssrc: number) =>
        client.request('meeting.produce.start', {
          ...room,
          transport_id: (transport as { id: string }).id,
          kind: 'audio',
          rtp_parameters: opusRtpParameters(ssrc),
        });
      const benProducer = ok(await produce(ben, benSend, 1111)).producer_id as string;
      const ann = await socket(doomedUrl, 'ann');
      ok(await ann.request('meeting.room.join', room));
      const annSend = ok(
        await ann.request('meeting.transport.create', { ...room, direction: 'send' }),
      );
      const annRecv = ok(
        await ann.request('meeting.transport.create', { ...room, direction: 'recv' }),
      );
      const annProducer = ok(await produce(ann, annSend, 2222)).producer_id as string;
      ok(
        await ann.request('meeting.consume.start', {
          ...room,
          transport_id: (annRecv as { id: string }).id,
          producer_id: benProducer,
          rtp_capabilities: caps,
        }),
      );
      assert.deepEqual(await mediaStats(media), {
        routers: 1,
        transports: 3,
        producers: 2,
        consumers: 1,
      });

      doomed.child.kill('SIGKILL');
      // ann comes back through the survivor at once and makes a transport there.
      const back = await socket(survivor.httpAddress, 'ann');
      ok(await back.request('meeting.room.join', room));
      ok(await back.request('meeting.transport.create', { ...room, direction: 'recv' }));

      // The dead node's transports, producer and consumer go; ben's and ann's new one stay.
      await until('the dead node’s media released', async () => {
        const held = await mediaStats(media);
        return held.transports === 2 && held.producers === 1 && held.consumers === 0;
      });
      await ben.waitFor(
        (f) =>
          f.event === 'meeting.member.producer.new' &&
          f.data.producer_id === annProducer &&
          f.data.closed === true,
        5_000,
      );
      const records = await redis.hkeys(
        `${keyPrefix}meeting:resources:default:${encodeURIComponent(code)}:${api.ids.ann}`,
      );
      assert.equal(records.length, 1, `only ann's new transport is recorded: ${records.join()}`);
      assert.equal(await redis.zcard(`${keyPrefix}media:holders`), 1, 'the dead node is forgotten');
    });
  });
});
