/**
 * A node whose MariaDB dies: a voice-room command is answered UNAVAILABLE with the reason
 * `DATABASE_UNAVAILABLE` over gRPC and 503 over REST (both say "retry"), never INTERNAL
 * ("do not retry"); once the database is back, the same request ids retried succeed, and
 * each took effect once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { status } from '@grpc/grpc-js';
import { createConnection } from 'mysql2/promise';
import { GrpcForwarder } from '../edge/grpc/room-service.js';
import { rawGrpcCall } from '../edge/grpc/testing/raw-grpc.js';
import { silentLogger } from '../cell/testing/harness.js';
import {
  privateMariadbSkipReason,
  startPrivateMariadb,
  type PrivateMariadb,
} from '../testing/private-mariadb.js';
import { loadConfig } from './config.js';
import { startNode, type RoomsNode } from './node.js';

const TOKEN = 'database-outage-grpc-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

void describe('a node whose database goes away', { skip: privateMariadbSkipReason() }, () => {
  let db: PrivateMariadb;
  let dbUrl: string;
  let node: RoomsNode;
  let grpc: GrpcForwarder;

  before(async () => {
    db = await startPrivateMariadb();
    dbUrl = await db.createDatabase('rooms');
    node = await startNode(
      loadConfig({
        ROOMS_DB_URL: dbUrl,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_GRPC_TOKEN: TOKEN,
        ROOMS_JWT_SECRET: 'database-outage-jwt-secret-0123456789abcdef',
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: '0',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
        ROOMS_BCRYPT_COST: '4',
        ROOMS_LOG_LEVEL: 'silent',
      }),
      silentLogger,
    );
    grpc = new GrpcForwarder({ token: TOKEN, tls: null, markForwarded: false });
  });
  after(async () => {
    grpc?.close();
    await node?.close();
    await db?.stop();
  });

  const rest = async (url: string, token: string, headers: Record<string, string> = {}) => {
    const res = await node.http.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${token}`, ...headers },
      payload: {},
    });
    return { status: res.statusCode, body: res.json<{ code: number; reason?: string }>() };
  };
  const userToken = async (username: string) => {
    const register = await node.http.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { username, password: 'secret123' },
    });
    assert.equal(register.statusCode, 201, register.body);
    const login = await node.http.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { username, password: 'secret123' },
    });
    return login.json<{ data: { access_token: string } }>().data.access_token;
  };

  void it('answers UNAVAILABLE (gRPC) and 503 (REST) while it is down, and each retry takes effect once', async () => {
    const carol = await userToken('carol');
    const addr = `127.0.0.1:${node.voice.grpcPort}`;
    await grpc.call(addr, 'CreateRoom', {
      room_id: 'outage',
      request_id: 'create',
      owner_user_id: '1001', // alice (user ids over gRPC: account ids in decimal)
      title: 'Outage',
      seat_count: 4,
    });
    await grpc.call(addr, 'JoinRoom', {
      room_id: 'outage',
      request_id: 'j-alice',
      user_id: '1001',
    });

    await db.kill('SIGKILL');
    const join = { room_id: 'outage', request_id: 'j-bob', user_id: '1002' }; // bob
    // The first call finds the room loaded (its commit fails); the next ones have to load it.
    const answers: unknown[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await rawGrpcCall(node.voice.grpcPort, 'JoinRoom', join, auth);
      answers.push(['grpc', status[res.code], res.reason]);
    }
    const down = await rest('/voice/rooms/outage/join', carol, { 'idempotency-key': 'j-carol' });
    answers.push(['rest', down.status, down.body.code, down.body.reason]);
    assert.deepEqual(answers, [
      ['grpc', 'UNAVAILABLE', 'DATABASE_UNAVAILABLE'],
      ['grpc', 'UNAVAILABLE', 'DATABASE_UNAVAILABLE'],
      ['rest', 503, 503, 'DATABASE_UNAVAILABLE'],
    ]);

    await db.restart();
    const joined = (await grpc.call(addr, 'JoinRoom', join)) as {
      room_version: number;
      duplicate: boolean;
    };
    assert.equal(joined.duplicate, false, 'nothing took effect while the database was down');
    const again = (await grpc.call(addr, 'JoinRoom', join)) as typeof joined;
    assert.deepEqual(again, { ...joined, duplicate: true });
    const up = await rest('/voice/rooms/outage/join', carol, { 'idempotency-key': 'j-carol' });
    assert.equal(up.status, 200, JSON.stringify(up.body));

    // create, alice, bob, carol: one version each, whatever was retried.
    const room = (await grpc.call(addr, 'GetRoom', { room_id: 'outage' })) as {
      room_version: number;
    };
    assert.equal(room.room_version, 4);
    const connection = await createConnection({ uri: dbUrl });
    try {
      const [rows] = await connection.query(
        'SELECT request_id FROM room_command_log WHERE room_id = ? ORDER BY version',
        ['outage'],
      );
      const ids = (rows as { request_id: string }[]).map((r) => r.request_id);
      assert.equal(ids.length, 4);
      assert.deepEqual(ids.slice(0, 3), ['create', 'j-alice', 'j-bob']);
      assert.match(ids[3]!, /:j-carol$/);
    } finally {
      await connection.end();
    }
  });
});
