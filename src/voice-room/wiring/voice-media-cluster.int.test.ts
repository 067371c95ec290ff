/**
 * Voice-room audio on two nodes (MariaDB + Redis, one separate media server): the owner
 * dies right after a MicDown commit, before it closed the seat's producer (its commit
 * listener never ran, its cell host aborted as if killed). The producer is still closed:
 * the surviving node's periodic check takes the room over and closes it.
 *
 * Any check that runs while the owner is alive closes the producer too (the owner's own, or
 * another node's answered by the owner), so "nobody closed it yet" holds only if no check
 * ran between the commit and the kill: the owner's checks stop before the MicDown and the
 * surviving node starts once the owner is dead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { meetingClient, type MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import { TestClient } from '../../edge/ws/testing/ws-client.js';
import type { MediaServer } from '../../media-server/server.js';
import {
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
  TEST_TOKEN,
  waitFor,
} from '../../media-server/testing/harness.js';
import { isMediaResourceNotFound } from '../../media-cluster/media-orchestrator.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';

const skip = (await clusterSkipReason()) || mediaSkipReason();

describe('voice-room audio when the owner dies after a MicDown', { skip }, () => {
  const nodes: RoomsNode[] = [];
  const keyPrefix = testKeyPrefix();
  let drop: () => Promise<void> = () => Promise.resolve();
  let media: MediaServer | undefined;
  let api: MeetingClient;

  let startNamed: (name: string) => Promise<RoomsNode> = () => Promise.reject(new Error());

  before(async () => {
    const server = await startTestMediaServer({ workers: 1 });
    media = server;
    const database = await createTestDatabase();
    drop = () => database.drop();
    startNamed = async (name) => {
      const node = await startNode(
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
          ROOMS_MEDIA_URL: server.url,
          ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
          ROOMS_LOG_LEVEL: 'silent',
          ROOMS_BCRYPT_COST: '4',
        }),
      );
      nodes.push(node);
      return node;
    };
    await startNamed('a');
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
    const a = nodes[0]!;
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
      // Read through the newest node: the producers on the (shared) media server.
      const live = () =>
        nodes
          .at(-1)!
          .media.orchestrator!.listProducers(mediaRoomOf(key, 'voice_room'))
          .catch((error: unknown) => {
            if (isMediaResourceNotFound(error)) return [];
            throw error;
          });
      assert.deepEqual(
        (await live()).map((p) => p.producerId),
        [producerId],
      );

      // Node a commits the MicDown and dies before closing the producer: its reactions and
      // checks stop first, so none of them closes it before the kill either.
      await a.reactions.stop();
      await a.voiceMedia.close();
      await post(`/${roomId}/mic/down`);
      await a.host.abort();
      assert.deepEqual(
        (await live()).map((p) => p.producerId),
        [producerId],
        'still open: nobody closed it yet',
      );

      // Node b starts: its check takes the room over (after a's lease) and closes it.
      const b = await startNamed('b');
      await waitFor(
        async () => ((await live()).length === 0 ? true : undefined),
        'the producer of the ended session to be closed',
        20_000,
      );
      assert.ok(b.host.loaded(key), 'node b owns the room now');
    } finally {
      socket.close();
    }
  });
});
