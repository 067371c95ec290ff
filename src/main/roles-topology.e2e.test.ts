/**
 * The seed's deployment on MariaDB + Redis, as node processes: a gateway (ROOMS_ROLES=edge)
 * → the room-service's internal load balancer (a TCP balancer here) → two cells nodes, the
 * one the balancer picks forwarding to the room's owner by its Redis route. The edge owns
 * nothing (no cell, no lease, no registry entry), its /ws still gets the room's frames, a
 * retry through it after the owner is killed gets the first answer, only the relay node
 * delivers webhooks, and a cells node whose ROOMS_ADVERTISE_ADDR is the load balancer (or
 * answers nothing) is refused at start with exit 2.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { TestClient } from '../edge/ws/testing/ws-client.js';
import {
  clusterSkipReason,
  connectMysql,
  createTestDatabase,
  deleteKeysWithPrefix,
  freePort,
  testKeyPrefix,
  testRedisUrl,
  type TestDatabase,
} from '../testing/backends.js';
import {
  READY_TIMEOUT_MS,
  ServerProcess,
  TEST_TIMEOUT_MS,
  reportingOutput,
  waitForHealthy,
} from '../testing/server-process.js';
import { TcpBalancer } from '../testing/tcp-balancer.js';

const skip = await clusterSkipReason();
const LEASE_TTL_MS = 1_500;
const ADMIN = 'roles-e2e-admin-token-0123456789';

interface Node {
  readonly name: string;
  readonly process: ServerProcess;
  readonly http: string;
  readonly grpc: string;
}
interface Answer {
  status: number;
  body: { code: number; message: string; reason?: string; data: any };
}

describe('the seed topology: an edge, the cells load balancer, two cells nodes', { skip }, () => {
  let database: TestDatabase;
  let balancer: TcpBalancer;
  let balancerAddress = '';
  let hooks: Server;
  const delivered: { room_id?: string; event_type?: string }[] = [];
  const keyPrefix = testKeyPrefix();
  const redis = new Redis(testRedisUrl(), { lazyConnect: true });
  const nodes: Record<string, Node> = {};
  const extra: ServerProcess[] = [];
  const sockets: TestClient[] = [];
  const tokens: Record<string, string> = {};
  /** Account ids, as JSON carries them: numbers. */
  const ids: Record<string, number> = {};
  const all = () => [...Object.values(nodes).map((n) => n.process), ...extra];

  const env = (name: string, roles: string, http: number, grpc: number) => ({
    ROOMS_NODE_ID: name,
    ROOMS_ROLES: roles,
    ROOMS_DB_URL: database.url,
    ROOMS_DB_POOL_SIZE: '4',
    ROOMS_REDIS_URL: testRedisUrl(),
    ROOMS_KEY_PREFIX: keyPrefix,
    ROOMS_HTTP_HOST: '127.0.0.1',
    ROOMS_HTTP_PORT: String(http),
    ROOMS_GRPC_HOST: '127.0.0.1',
    ROOMS_GRPC_PORT: String(grpc),
    ROOMS_GRPC_TOKEN: 'roles-e2e-grpc-token-0123456789abcdef',
    ROOMS_ADVERTISE_ADDR: `127.0.0.1:${grpc}`,
    ROOMS_LEASE_TTL_MS: String(LEASE_TTL_MS),
    ROOMS_JWT_SECRET: 'roles-e2e-secret-0123456789abcdefghij',
    ROOMS_ADMIN_TOKEN: ADMIN,
    ROOMS_BCRYPT_COST: '4',
    ROOMS_OUTBOX_POLL_MS: '100',
    ROOMS_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
    ROOMS_LOG_LEVEL: 'warn',
  });
  const call = async (node: Node, method: string, path: string, as?: string, body?: unknown) => {
    const res = await fetch(`${node.http}/api${path}`, {
      method,
      headers: {
        ...(as ? { authorization: `Bearer ${tokens[as]}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(path.startsWith('/v1/admin/') ? { 'x-admin-token': ADMIN } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  };
  const ownerOf = async (roomId: string) =>
    (await redis.get(`${keyPrefix}lease:default\u0000${roomId}`))?.split('\n')[0] ?? null;

  before(async () => {
    database = await createTestDatabase();
    await redis.connect();
    hooks = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        delivered.push(JSON.parse(text) as { room_id?: string; event_type?: string });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const ports = async () => [await freePort(), await freePort()] as const;
    const [aHttp, aGrpc] = await ports();
    const [bHttp, bGrpc] = await ports();
    const [edgeHttp, edgeGrpc] = await ports();
    ({ balancer, address: balancerAddress } = await TcpBalancer.roundRobin([
      `127.0.0.1:${aGrpc}`,
      `127.0.0.1:${bGrpc}`,
    ]));
    const add = (name: string, roles: string, http: number, grpc: number, more = {}) => {
      nodes[name] = {
        name,
        process: new ServerProcess(name, { ...env(name, roles, http, grpc), ...more }),
        http: `http://127.0.0.1:${http}`,
        grpc: `127.0.0.1:${grpc}`,
      };
    };
    add('cells-a', 'cells,relay', aHttp, aGrpc);
    add('cells-b', 'cells', bHttp, bGrpc);
    add('edge', 'edge', edgeHttp, edgeGrpc, { ROOMS_CELLS_ADDR: balancerAddress });
    await reportingOutput(all(), async () => {
      await Promise.all(Object.values(nodes).map((n) => waitForHealthy(n.process, n.http, 60_000)));
    });
    for (const who of ['ann', 'bob']) {
      const creds = { username: `roles_${who}`, password: 'secret123' };
      await call(nodes.edge!, 'POST', '/v1/auth/register', undefined, creds);
      const login = await call(nodes.edge!, 'POST', '/v1/auth/login', undefined, creds);
      tokens[who] = login.body.data.access_token as string;
      ids[who] = login.body.data.user.id as number;
    }
  });
  after(async () => {
    for (const s of sockets) s.close();
    await Promise.all(all().map((p) => p.stop()));
    await balancer?.close();
    await new Promise((resolve) => hooks?.close(resolve));
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    redis.disconnect();
    await database?.drop();
  });

  it(
    'the edge runs every command on the cells nodes, through the balancer and a forward',
    { timeout: TEST_TIMEOUT_MS * 2 },
    () =>
      reportingOutput(all(), async () => {
        const edge = nodes.edge!;
        const hook = await call(edge, 'PUT', '/v1/admin/apps/default/webhook', undefined, {
          url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`,
          secret: 'roles-e2e-webhook-secret',
        });
        assert.equal(hook.status, 200, JSON.stringify(hook.body));

        const created = await call(edge, 'POST', '/v1/voice/rooms', 'ann', {
          title: 'roles',
          seat_count: 4,
          request_id: 'create-1',
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const roomId = created.body.data.room_id as string;
        const ownerName = await ownerOf(roomId);
        assert.ok(ownerName === 'cells-a' || ownerName === 'cells-b', `owner ${ownerName}`);
        const owner = nodes[ownerName]!;
        const other = nodes[ownerName === 'cells-a' ? 'cells-b' : 'cells-a']!;

        // A reader follows on the edge's /ws (its access check is a query on the owner).
        assert.equal(
          (await call(edge, 'POST', `/v1/voice/rooms/${roomId}/join`, 'bob', {})).body.code,
          0,
        );
        const bob = await TestClient.connect(
          `${edge.http.replace(/^http/, 'ws')}/ws?token=${tokens.bob}`,
        );
        sockets.push(bob);
        assert.equal((await bob.request('room.subscribe', { room_id: roomId })).code, 0);

        // From now on the balancer sends the edge to the node that does not own the room.
        balancer.pin(other.grpc);
        balancer.dropAll();
        const join = () =>
          call(edge, 'POST', `/v1/voice/rooms/${roomId}/join`, 'ann', { request_id: 'join-ann' });
        let first = await join();
        // The edge's channel may see the dropped connection once (unavailable: retry).
        if (first.status === 503) first = await join();
        assert.deepEqual([first.status, first.body.code], [200, 0], JSON.stringify(first.body));
        assert.equal(first.body.data.duplicate, false);
        const frame = await bob.waitFor(
          (f) => f.event === 'voice.member.joined' && f.data.user_id === ids.ann,
          10_000,
        );
        assert.equal(frame.data.room_id, roomId);
        const view = await call(edge, 'GET', `/v1/voice/rooms/${roomId}`, 'ann');
        assert.equal(view.status, 200, JSON.stringify(view.body));
        assert.equal(view.body.data.room_version, first.body.data.room_version);
        assert.ok(
          balancer.connections.includes(other.grpc),
          'the balancer sent the edge to the non-owner',
        );
        assert.equal(
          await ownerOf(roomId),
          owner.name,
          'the non-owner forwarded, it did not take the room',
        );

        // A meeting call goes the same way: created on a cells node, read back through the edge.
        const meeting = await call(edge, 'POST', '/v1/meeting/rooms', 'ann', { title: '网关' });
        assert.equal(meeting.status, 201, JSON.stringify(meeting.body));
        const code = meeting.body.data.room.room_code as string;
        assert.ok(
          ['cells-a', 'cells-b'].includes((await ownerOf(code)) ?? ''),
          'a cells node owns the meeting',
        );
        const got = await call(edge, 'GET', `/v1/meeting/rooms/${code}`, 'ann');
        assert.equal(got.status, 200, JSON.stringify(got.body));

        // The edge owns nothing: no loaded cell, no lease, no registry entry.
        const cells = await call(edge, 'GET', '/v1/admin/cells');
        assert.deepEqual([cells.body.data.node_id, cells.body.data.total], ['edge', 0]);
        const ownerCells = await call(owner, 'GET', '/v1/admin/cells');
        assert.ok(ownerCells.body.data.total >= 1);
        const leases = await redis.keys(`${keyPrefix}lease:*`);
        assert.ok(leases.length >= 2);
        for (const key of leases) {
          assert.notEqual(
            (await redis.get(key))?.split('\n')[0],
            'edge',
            `${key} held by the edge`,
          );
        }
        assert.equal(await redis.get(`${keyPrefix}room:node:edge`), null);
        assert.equal(await redis.get(`${keyPrefix}room:node:cells-a`), nodes['cells-a']!.grpc);

        // Webhooks: only the relay node (cells-a) claims and delivers.
        await bob.until(() => delivered.filter((e) => e.room_id === roomId).length >= 3, 15_000);
        const sql = await connectMysql(database.url);
        try {
          const [rows] = await sql.query(
            'SELECT DISTINCT worker_id FROM room_outbox WHERE worker_id IS NOT NULL',
          );
          const workers = (rows as { worker_id: string }[]).map((r) => r.worker_id.split(':')[0]);
          assert.deepEqual([...new Set(workers)], ['cells-a']);
        } finally {
          await sql.end();
        }

        // The owner dies: the retry through the edge gets the first answer once the survivor
        // took the room (after the lease TTL), and a new command runs there.
        owner.process.child.kill('SIGKILL');
        await owner.process.exited;
        balancer.dropAll();
        let retried: Answer | null = null;
        const until = Date.now() + LEASE_TTL_MS + 15_000;
        while (Date.now() < until) {
          retried = await join();
          if (retried.status !== 503) break;
          await sleep(200);
        }
        assert.equal(retried?.status, 200, JSON.stringify(retried?.body));
        assert.deepEqual(retried.body.data, { ...first.body.data, duplicate: true });
        assert.equal(await ownerOf(roomId), other.name);
        const left = await call(edge, 'POST', `/v1/voice/rooms/${roomId}/leave`, 'bob', {});
        assert.deepEqual(
          [left.status, left.body.data.room_version],
          [200, first.body.data.room_version + 1],
        );
      }),
  );

  it(
    'refuses to start a cells node whose advertise address is the load balancer, or answers nothing',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      reportingOutput(all(), async () => {
        const survivor = Object.values(nodes).find((n) => n.name !== 'edge' && n.process.alive)!;
        balancer.pin(survivor.grpc);
        const start = async (name: string, advertise: string | null) => {
          const [http, grpc] = [await freePort(), await freePort()];
          const node = new ServerProcess(name, {
            ...env(name, 'cells', http, grpc),
            ...(advertise ? { ROOMS_ADVERTISE_ADDR: advertise } : {}),
          });
          extra.push(node);
          return node;
        };
        const closed = `127.0.0.1:${await freePort()}`;
        const [behindLb, silent] = [
          await start('cells-lb', balancerAddress),
          await start('cells-silent', closed),
        ];
        const [lbExit, silentExit] = await Promise.all([
          behindLb.waitForExit(READY_TIMEOUT_MS * 2),
          silent.waitForExit(READY_TIMEOUT_MS * 2),
        ]);
        assert.deepEqual(lbExit, { code: 2, signal: null });
        assert.match(
          behindLb.stderr,
          new RegExp(
            `ROOMS_ADVERTISE_ADDR ${balancerAddress} is answered by node "${survivor.name}", not by this node "cells-lb"`,
          ),
        );
        assert.doesNotMatch(behindLb.stderr, /failed to start/);
        assert.deepEqual(silentExit, { code: 2, signal: null });
        assert.match(
          silent.stderr,
          new RegExp(`ROOMS_ADVERTISE_ADDR ${closed} did not answer as this node`),
        );
        // Neither ever registered, so nobody forwards to them.
        assert.equal(await redis.get(`${keyPrefix}room:node:cells-lb`), null);
        assert.equal(await redis.get(`${keyPrefix}room:node:cells-silent`), null);
      }),
  );
});
