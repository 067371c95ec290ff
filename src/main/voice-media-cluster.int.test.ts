/**
 * Voice-room audio on two nodes (MariaDB + Redis, one separate media server): the owner
 * dies right after a MicDown commit, before it closed the seat's producer (its commit
 * listener never ran, its cell host aborted as if killed). The producer is still closed:
 * the surviving node's periodic check takes the room over and closes it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { meetingClient, type MeetingClient } from '../edge/meeting/testing/meeting-client.js';
import { TestClient } from '../edge/ws/testing/ws-client.js';
import type { MediaServer } from '../media-server/server.js';
import {
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
  TEST_TOKEN,
} from '../media-server/testing/harness.js';
import { mediaRoomOf } from '../meeting/media-servers.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../testing/backends.js';
import { loadConfig } from './config.js';
import { startNode, type RoomsNode } from './node.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();

describe('voice-room audio when the owner dies after a MicDown', { skip }, () => {
  const nodes: RoomsNode[] = [];
  const keyPrefix = testKeyPrefix();
  let drop: () => Promise<void> = () => Promise.resolve();
  let media: MediaServer | undefined;
  let api: MeetingClient;

  before(async () => {
    media = await startTestMediaServer({ workers: 1 });
    const database = await createTestDatabase();
    drop = () => database.drop();
    for (const name of ['a', 'b']) {
      nodes.push(
        await startNode(
          loadConfig({
            ROOMS_NODE_ID: `voice-media-${name}`,
            ROOMS_DB_URL: database.url,
            ROOMS_DB_POOL_SIZE: '4',
            ROOMS_REDIS_URL: testRedisUrl(),
            ROOMS_KEY_PREFIX: keyPrefix,
            ROOMS_JWT_SECRET: 'voice-media-cluster-secret-0123456789abc',
            ROOMS_GRPC_TOKEN: 'voice-media-cluster-grpc-token-012345678',
            ROOMS_HTTP_HOST: '127.0.0.1',
            ROOMS_HTTP_PORT: '0',
            ROOMS_GRPC_PORT: '0',
            ROOMS_LEASE_TTL_MS: '1500',
            ROOMS_VOICE_MEDIA_CHECK_MS: '400',
            ROOMS_MEDIA_EMBEDDED: 'false',
            ROOMS_MEDIA_URL: media.url,
            ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
            ROOMS_LOG_LEVEL: 'silent',
            ROOMS_BCRYPT_COST: '4',
          }),
        ),
      );
    }
    api = meetingClient(() => nodes[0]!.http);
    await api.users(['anna']);
  });
  after(async () => {
    for (const node of nodes) await node.close();
    await media?.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    await drop();
  });

  it('the producer of the ended session is closed by the surviving node', async () => {
    const [a, b] = nodes as [RoomsNode, RoomsNode];
    const post = async (path: string, body: object = {}) => {
      const res = await api.call('POST', `/voice/rooms${path}`, { as: 'anna', body });
      assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, unknown>;
    };
    const { room_id: roomId } = (await post('', { title: '接管' })) as { room_id: string };
    const key = { appCode: 'default', roomId };
    assert.ok(a.host.loaded(key), 'node a owns the room');
    await post(`/${roomId}/join`);
    await post(`/${roomId}/mic/up`, { seat_index: 0 });

    const socket = await TestClient.connect(
      `${a.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens.anna}`,
    );
    try {
      const ok = (ack: { code: number; message?: string; data: unknown }) => {
        assert.equal(ack.code, 0, ack.message);
        return ack.data as Record<string, unknown>;
      };
      ok(await socket.request('room.subscribe', { room_id: roomId }));
      ok(await socket.request('voice.media.join', { room_id: roomId }));
      const send = ok(
        await socket.request('voice.transport.create', { room_id: roomId, direction: 'send' }),
      ).id as string;
      const producerId = ok(
        await socket.request('voice.produce.start', {
          room_id: roomId,
          transport_id: send,
          kind: 'audio',
          rtp_parameters: opusRtpParameters(777),
        }),
      ).producer_id as string;
      const live = () =>
        b.media.orchestrator!.listProducers(mediaRoomOf(key, 'voice_room')).catch(() => []);
      assert.deepEqual(
        (await live()).map((p) => p.producerId),
        [producerId],
      );

      // Node a commits the MicDown and dies before closing the producer.
      a.voiceMedia.signalling.onCommitted = () => undefined;
      await post(`/${roomId}/mic/down`);
      await a.voiceMedia.close();
      await a.host.abort();
      assert.deepEqual(
        (await live()).map((p) => p.producerId),
        [producerId],
        'still open: nobody closed it yet',
      );

      // Node b's check takes the room over (after a's lease) and closes it.
      for (let i = 0; i < 100 && (await live()).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(await live(), [], 'the producer of the ended session is closed');
      assert.ok(b.host.loaded(key), 'node b owns the room now');
    } finally {
      socket.close();
    }
  });
});
