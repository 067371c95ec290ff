/**
 * Test fixture: two standalone media servers registered in Redis (media-a, media-b; 1.5 s
 * registration TTL) and one rooms node on a fresh MariaDB database whose own server is
 * media-a, with registered users and the REST / `/ws` helpers the failover tests share.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { meetingClient, type MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import { TestClient, type Frame } from '../../edge/ws/testing/ws-client.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { loadConfig } from '../config.js';
import { startNode, type RoomsNode } from '../node.js';
import { clusterNodeEnv, spawnMediaServer, type RegisteredMediaServer } from './media-cluster.js';

export interface TwoMediaServers {
  readonly keyPrefix: string;
  readonly redis: Redis;
  readonly mA: RegisteredMediaServer;
  readonly mB: RegisteredMediaServer;
  readonly node: RoomsNode;
  readonly api: MeetingClient;
  /** POST /meeting/rooms as `who`: the room code. */
  createMeeting(who: string): Promise<string>;
  /** POST /voice/rooms<path> as `who`: the answer's data (a 2xx is asserted). */
  voice(path: string, who: string, body?: object): Promise<Record<string, unknown>>;
  /** A `/ws` client of `who`, closed with the fixture. */
  socket(who: string): Promise<TestClient>;
  /** The `/ws` clients opened so far, in order. */
  readonly sockets: readonly TestClient[];
  close(): Promise<void>;
}

/** An ACK's data, asserting it succeeded. */
export function ok(ack: Frame): Record<string, unknown> {
  assert.equal(ack.code, 0, ack.message);
  return ack.data;
}

export async function startTwoMediaServers(options: {
  nodeId: string;
  /** The first of two blocks of 1,000 WebRTC ports (media-a's, then media-b's). */
  rtcPortBase: number;
  users: readonly string[];
  /** More variables of both media servers. */
  mediaEnv?: Readonly<Record<string, string>>;
}): Promise<TwoMediaServers> {
  const keyPrefix = testKeyPrefix();
  const redisUrl = testRedisUrl();
  const redis = new Redis(redisUrl);
  const sockets: TestClient[] = [];
  const common = { redisUrl, keyPrefix, ttlMs: 1_500, env: options.mediaEnv ?? {} };
  const base = options.rtcPortBase;
  const [mA, mB] = await Promise.all([
    spawnMediaServer({ ...common, id: 'media-a', rtcPorts: [base, base + 999] }),
    spawnMediaServer({ ...common, id: 'media-b', rtcPorts: [base + 1000, base + 1999] }),
  ]);
  const database = await createTestDatabase();
  const node = await startNode(
    loadConfig(
      clusterNodeEnv({
        nodeId: options.nodeId,
        databaseUrl: database.url,
        redisUrl,
        keyPrefix,
        own: mA,
      }),
    ),
  );
  const api = meetingClient(() => node.http);
  await api.users([...options.users]);
  return {
    keyPrefix,
    redis,
    mA,
    mB,
    node,
    api,
    sockets,
    async createMeeting(who) {
      const res = await api.call('POST', '/meeting/rooms', { as: who, body: { title: who } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return (res.body.data as { room: { room_code: string } }).room.room_code;
    },
    async voice(path, who, body = {}) {
      const res = await api.call('POST', `/voice/rooms${path}`, { as: who, body });
      assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, unknown>;
    },
    async socket(who) {
      const client = await TestClient.connect(
        `${node.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens[who]}`,
      );
      sockets.push(client);
      return client;
    },
    async close() {
      for (const s of sockets) s.close();
      await node.close();
      await Promise.all([mA.process.stop(), mB.process.stop()]);
      await deleteKeysWithPrefix(redisUrl, keyPrefix).catch(() => 0);
      redis.disconnect();
      await database.drop();
    },
  };
}
