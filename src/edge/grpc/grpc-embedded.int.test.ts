/**
 * The gRPC RoomService of a whole embedded node (`startNode`, SQLite, no Redis): without
 * ROOMS_GRPC_TOKEN it still refuses every call that lacks a credential (the node made one up);
 * with it, the real voice-room API answers, and a call whose deadline is already spent changes
 * nothing.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { GrpcForwarder } from './room-service.js';
import { rawGrpcCall } from './testing/raw-grpc.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';

const TOKEN = 'embedded-grpc-token-for-tests-0123456789';

void describe('gRPC of an embedded node', () => {
  let dir: string;
  const nodes: RoomsNode[] = [];
  const start = async (env: Record<string, string>) => {
    const node = await startNode(
      loadConfig({
        ROOMS_DB_URL: join(dir, `rooms-${nodes.length}.sqlite`),
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_PORT: '0',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
        ROOMS_LOG_LEVEL: 'silent',
        ROOMS_BCRYPT_COST: '4',
        ...env,
      }),
    );
    nodes.push(node);
    return node;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-grpc-embedded-'));
  });
  after(async () => {
    for (const node of nodes) await node.close();
    await rm(dir, { recursive: true, force: true });
  });

  const create = {
    room_id: 'room-1',
    request_id: 'create-1',
    owner_user_id: '1001',
    title: 't',
    seat_count: 2,
  };

  void it('without ROOMS_GRPC_TOKEN refuses calls without the (generated) credential', async () => {
    const node = await start({});
    const port = node.voice.grpcPort;
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer ' },
      { authorization: `Bearer ${TOKEN}` },
    ];
    for (const headers of attempts) {
      const res = await rawGrpcCall(port, 'CreateRoom', create, headers);
      assert.equal(res.code, status.UNAUTHENTICATED, res.details);
    }
    const room = await node.voice.api
      .call('GetRoom', { room_id: 'room-1' })
      .catch((e: unknown) => e);
    assert.equal((room as { code?: string }).code, 'ROOM_NOT_FOUND', 'nothing was created');
  });

  void it('with ROOMS_GRPC_TOKEN serves the voice-room API to holders of the token', async () => {
    const node = await start({ ROOMS_GRPC_TOKEN: TOKEN });
    const addr = `127.0.0.1:${node.voice.grpcPort}`;
    const client = new GrpcForwarder({ token: TOKEN, tls: null, markForwarded: false });
    try {
      // A spent deadline: refused before anything runs.
      const late = await rawGrpcCall(node.voice.grpcPort, 'CreateRoom', create, {
        authorization: `Bearer ${TOKEN}`,
        'grpc-timeout': '0n',
      });
      assert.equal(late.code, status.DEADLINE_EXCEEDED, late.details);
      await assert.rejects(client.call(addr, 'GetRoom', { room_id: 'room-1' }), {
        code: 'ROOM_NOT_FOUND',
      });
      // A user id is an account id in decimal: 'alice' is refused, and creates nothing.
      const named = await rawGrpcCall(
        node.voice.grpcPort,
        'CreateRoom',
        { ...create, owner_user_id: 'alice' },
        { authorization: `Bearer ${TOKEN}` },
      );
      assert.equal(named.code, status.INVALID_ARGUMENT, named.details);
      await assert.rejects(client.call(addr, 'GetRoom', { room_id: 'room-1' }), {
        code: 'ROOM_NOT_FOUND',
      });
      const created = (await client.call(addr, 'CreateRoom', create)) as { room_id: string };
      assert.equal(created.room_id, 'room-1');
      const room = (await client.call(addr, 'GetRoom', { room_id: 'room-1' })) as {
        title: string;
        owner_user_id: unknown;
      };
      assert.equal(room.title, 't');
      // gRPC's string fields carry the user ids in decimal.
      assert.equal(room.owner_user_id, '1001');
    } finally {
      client.close();
    }
  });
});
