/**
 * A read through an owner that was stopped (SIGSTOP) past its lease, on three node
 * processes (MariaDB + Redis): meanwhile another node took the room, committed a change and
 * handed the room back (drain: its lease released, so the key is gone). Woken, the old owner
 * must not answer from its memory: its lease is lost, so it loads the room again and shows
 * the other node's change. Before, its renewal found the key gone and granted itself a new
 * lease, and it answered reads (and the access checks that gate follows) from stale state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  freePort,
  testKeyPrefix,
  testRedisUrl,
  type TestDatabase,
} from '../testing/backends.js';
import {
  ServerProcess,
  TEST_TIMEOUT_MS,
  reportingOutput,
  waitForHealthy,
} from '../testing/server-process.js';

const skip = await clusterSkipReason();
const ADMIN = 'paused-read-admin-token-0123456789';
const LEASE_TTL_MS = 2_000;

interface Node {
  readonly name: string;
  readonly process: ServerProcess;
  readonly http: string;
}

describe('a read through an owner woken after its lease was lost', { skip }, () => {
  let database: TestDatabase;
  const keyPrefix = testKeyPrefix();
  const redis = new Redis(testRedisUrl(), { lazyConnect: true });
  const nodes: Node[] = [];
  const tokens: Record<string, string> = {};

  const call = async (
    node: Node,
    method: 'GET' | 'POST',
    path: string,
    opts: { as?: string; body?: unknown; admin?: boolean } = {},
  ): Promise<{ code: number; data?: any; message?: string }> => {
    const res = await fetch(`${node.http}${path}`, {
      method,
      headers: {
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(opts.as ? { authorization: `Bearer ${tokens[opts.as]}` } : {}),
        ...(opts.admin ? { 'x-admin-token': ADMIN } : {}),
      },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    return (await res.json()) as { code: number; data?: any };
  };
  const ok = async (...args: Parameters<typeof call>) => {
    const body = await call(...args);
    assert.equal(body.code, 0, `${args[1]} ${args[2]}: ${JSON.stringify(body)}`);
    return body.data;
  };
  const leaseKey = (roomId: string) => `${keyPrefix}lease:default\u0000${roomId}`;
  const leaseHolder = async (roomId: string) =>
    (await redis.get(leaseKey(roomId)))?.split('\n')[0] ?? null;
  /** Polls until `probe` answers true (a positive signal), or fails after `ms`. */
  const until = async (what: string, probe: () => Promise<boolean>, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };

  before(async () => {
    database = await createTestDatabase();
    await redis.connect();
    for (const name of ['read-a', 'read-b', 'read-c']) {
      const [httpPort, grpcPort] = [await freePort(), await freePort()];
      const env = {
        ROOMS_NODE_ID: name,
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: String(httpPort),
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: String(grpcPort),
        ROOMS_GRPC_TOKEN: 'paused-read-grpc-token-0123456789abcd',
        ROOMS_ADVERTISE_ADDR: `127.0.0.1:${grpcPort}`,
        ROOMS_LEASE_TTL_MS: String(LEASE_TTL_MS),
        ROOMS_JWT_SECRET: 'paused-read-secret-0123456789abcdef',
        ROOMS_ADMIN_TOKEN: ADMIN,
        ROOMS_BCRYPT_COST: '4',
        ROOMS_LOG_LEVEL: 'warn',
        ROOMS_MEDIA_EMBEDDED: 'false', // media has its own tests
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
      };
      nodes.push({
        name,
        process: new ServerProcess(name, env),
        http: `http://127.0.0.1:${httpPort}`,
      });
    }
    await reportingOutput(
      nodes.map((n) => n.process),
      async () => {
        await Promise.all(nodes.map((n) => waitForHealthy(n.process, n.http, 60_000)));
      },
    );
    for (const name of ['alice', 'bob']) {
      await ok(nodes[0]!, 'POST', '/api/v1/auth/register', {
        body: { username: name, password: 'secret123' },
      });
      const login = await ok(nodes[0]!, 'POST', '/api/v1/auth/login', {
        body: { username: name, password: 'secret123' },
      });
      tokens[name] = login.access_token as string;
    }
  });

  after(async () => {
    for (const n of nodes) n.process.child.kill('SIGCONT');
    await Promise.all(nodes.map((n) => n.process.stop()));
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    redis.disconnect();
    await database?.drop();
  });

  it(
    'shows the change the next owner committed, never its own stale state',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      reportingOutput(
        nodes.map((n) => n.process),
        async () => {
          const [a, b, c] = nodes as [Node, Node, Node];
          const { room_id: roomId } = await ok(a, 'POST', '/api/v1/voice/rooms', {
            as: 'alice',
            body: { title: 'paused owner', seat_count: 4, request_id: 'paused-read-create' },
          });
          await ok(a, 'POST', `/api/v1/voice/rooms/${roomId}/join`, { as: 'alice' });
          assert.equal(await leaseHolder(roomId), a.name, 'the creating node owns the room');
          const before = await ok(a, 'GET', `/api/v1/voice/rooms/${roomId}`, { as: 'alice' });
          assert.equal(before.online_count, 1);

          a.process.child.kill('SIGSTOP');
          try {
            // Stopped, the owner renews nothing: its lease runs out.
            await until('the stopped owner’s lease to expire', async () => {
              return (await leaseHolder(roomId)) === null;
            });
            const joined = await ok(b, 'POST', `/api/v1/voice/rooms/${roomId}/join`, {
              as: 'bob',
            });
            assert.equal(await leaseHolder(roomId), b.name, 'the next owner took the room');
            const drained = await ok(b, 'POST', '/api/v1/admin/node/drain', {
              admin: true,
              body: {},
            });
            assert.equal(drained.cells_handed_over, 1);
            assert.equal(await leaseHolder(roomId), null, 'handed back: the lease is released');

            a.process.child.kill('SIGCONT');
            const viaA = await ok(a, 'GET', `/api/v1/voice/rooms/${roomId}`, { as: 'alice' });
            assert.deepEqual(
              [viaA.room_version, viaA.online_count],
              [joined.room_version, 2],
              'the woken owner answered from its stale memory',
            );
            const viaC = await ok(c, 'GET', `/api/v1/voice/rooms/${roomId}`, { as: 'bob' });
            assert.deepEqual([viaC.room_version, viaC.online_count], [joined.room_version, 2]);
          } finally {
            a.process.child.kill('SIGCONT');
          }
        },
      ),
  );
});
