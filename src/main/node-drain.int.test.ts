/**
 * The operator's drain on two nodes (MariaDB + a private Redis, in one process): a drained
 * node hands its rooms over (the other node serves them at once), takes no new ones,
 * answers `/readyz` 503, still forwards to rooms that live elsewhere, and serves again after
 * undrain, all without a restart; the calls need the admin token. `/readyz` stays ready
 * through a Redis outage (degraded) and says so, and is plain ready again once Redis is back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  clusterSkipReason,
  createTestDatabase,
  startPrivateRedis,
  testKeyPrefix,
  type PrivateRedis,
} from '../testing/backends.js';
import { eventually, silentLogger } from '../cell/testing/harness.js';
import { loadConfig } from './config.js';
import { startNode, type RoomsNode } from './node.js';

const skip = await clusterSkipReason();
const ADMIN = 'drain-admin-token-0123456789';
const ROOMS = 20;

describe('draining a node and returning it to service', { skip }, () => {
  const nodes: RoomsNode[] = [];
  let redis: PrivateRedis;
  let drop: () => Promise<void> = () => Promise.resolve();
  const tokens: Record<string, string> = {};

  const call = async (
    node: RoomsNode,
    method: 'GET' | 'POST',
    url: string,
    opts: { as?: string; body?: unknown; admin?: string | null } = {},
  ) => {
    const res = await node.http.inject({
      method,
      url,
      headers: {
        ...(opts.as ? { authorization: `Bearer ${tokens[opts.as]}` } : {}),
        ...(opts.admin ? { 'x-admin-token': opts.admin } : {}),
      },
      ...(opts.body !== undefined ? { payload: opts.body as object } : {}),
    });
    return { status: res.statusCode, body: res.json<any>() };
  };
  const ok = async (...args: Parameters<typeof call>) => {
    const r = await call(...args);
    assert.equal(r.body.code, 0, `${args[2]}: ${JSON.stringify(r.body)}`);
    return r.body.data;
  };
  const readyz = (node: RoomsNode) => call(node, 'GET', '/readyz');
  const drain = (node: RoomsNode) =>
    call(node, 'POST', '/api/v1/admin/node/drain', { admin: ADMIN, body: {} });
  const undrain = (node: RoomsNode) =>
    call(node, 'POST', '/api/v1/admin/node/undrain', { admin: ADMIN, body: {} });
  const key = (roomId: string) => ({ appCode: 'default', roomId });
  let seq = 0;
  const createRoom = async (via: RoomsNode) => {
    const data = await ok(via, 'POST', '/api/v1/voice/rooms', {
      as: 'alice',
      body: { title: 'drain', seat_count: 4, request_id: `drain-create-${++seq}` },
    });
    return data.room_id as string;
  };

  before(async () => {
    redis = await startPrivateRedis();
    const database = await createTestDatabase();
    drop = () => database.drop();
    const keyPrefix = testKeyPrefix();
    for (const name of ['a', 'b']) {
      const config = loadConfig({
        ROOMS_NODE_ID: `drain-${name}`,
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_REDIS_URL: redis.url,
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_JWT_SECRET: 'drain-test-secret-0123456789abcdef',
        ROOMS_GRPC_TOKEN: 'drain-test-grpc-token-0123456789abcd',
        ROOMS_ADMIN_TOKEN: ADMIN,
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: '0',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
        ROOMS_LOG_LEVEL: 'silent',
        ROOMS_BCRYPT_COST: '4',
      });
      nodes.push(await startNode(config, silentLogger));
    }
    for (const name of ['alice', 'bob']) {
      await ok(nodes[0]!, 'POST', '/api/v1/auth/register', {
        body: { username: name, password: 'secret123' },
      });
      const login = await ok(nodes[0]!, 'POST', '/api/v1/auth/login', {
        body: { username: name, password: 'secret123' },
      });
      tokens[name] = login.access_token;
    }
  });
  after(async () => {
    for (const node of nodes) await node.close();
    await redis?.stop();
    await drop();
  });

  it('a drained node hands its rooms to the other node, takes none, and serves again after undrain', async () => {
    const [a, b] = [nodes[0]!, nodes[1]!];
    const rooms: string[] = [];
    for (let i = 0; i < ROOMS; i++) rooms.push(await createRoom(a));
    for (const roomId of rooms) {
      await ok(a, 'POST', `/api/v1/voice/rooms/${roomId}/join`, { as: 'alice' });
    }
    assert.equal(rooms.filter((r) => a.host.loaded(key(r))).length, ROOMS, 'a owns its rooms');
    assert.deepEqual(await readyz(a), {
      status: 200,
      body: {
        status: 'ready',
        node_id: 'drain-a',
        checks: { database: 'up', redis: 'up', service: 'serving' },
      },
    });

    const drained = await drain(a);
    assert.equal(drained.status, 200, JSON.stringify(drained.body));
    const report = drained.body.data;
    assert.deepEqual(
      [report.node_id, report.state, report.cells_handed_over, report.timed_out],
      ['drain-a', 'drained', ROOMS, false],
    );
    process.stdout.write(`# drain of ${ROOMS} loaded rooms took ${report.took_ms} ms\n`);
    assert.equal(a.host.loadedCells.length, 0);
    const notReady = await readyz(a);
    assert.deepEqual(
      [notReady.status, notReady.body.status, notReady.body.checks.service],
      [503, 'draining', 'drained'],
    );

    // Right after: the other node takes the room at its next command, with its state.
    await ok(b, 'POST', `/api/v1/voice/rooms/${rooms[0]}/join`, { as: 'bob' });
    assert.ok(b.host.loaded(key(rooms[0]!)), 'b owns the room now');
    assert.equal((await roomOf(b, rooms[0]!)).online_count, 2, 'with the state a committed');
    // The drained node still forwards to a room that lives elsewhere …
    const viaDrained = await ok(a, 'GET', `/api/v1/voice/rooms/${rooms[0]}`, { as: 'bob' });
    assert.equal(viaDrained.online_count, 2);
    assert.equal(a.host.loaded(key(rooms[0]!)), undefined);
    // … but takes no room itself: a room nobody owns is refused, to be retried elsewhere.
    const refused = await call(a, 'POST', `/api/v1/voice/rooms/${rooms[1]}/join`, { as: 'bob' });
    assert.deepEqual([refused.status, refused.body.reason], [503, 'NODE_DRAINING']);
    // Draining again answers the same hand-over.
    assert.deepEqual((await drain(a)).body.data, report);

    const back = await undrain(a);
    assert.deepEqual(
      [back.status, back.body.data],
      [200, { node_id: 'drain-a', state: 'serving' }],
    );
    assert.equal((await readyz(a)).status, 200);
    const fresh = await createRoom(a);
    assert.ok(a.host.loaded(key(fresh)), 'an undrained node takes rooms again');
    await ok(a, 'POST', `/api/v1/voice/rooms/${rooms[1]}/join`, { as: 'bob' });
    assert.ok(a.host.loaded(key(rooms[1]!)));
  });

  it('drain and undrain need the admin token and take no fields', async () => {
    const a = nodes[0]!;
    for (const path of ['/api/v1/admin/node/drain', '/api/v1/admin/node/undrain']) {
      for (const admin of [null, '', 'drain-admin-token-012345678X', `${ADMIN}0`]) {
        const res = await call(a, 'POST', path, { admin, body: {} });
        assert.deepEqual([res.status, res.body.reason], [401, 'BAD_ADMIN_TOKEN'], `${path}`);
      }
      for (const body of ['{"timeout_ms":1}', '[1]', '"now"', 'null', '{']) {
        const res = await a.http.inject({
          method: 'POST',
          url: path,
          headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
          payload: body,
        });
        assert.equal(res.statusCode, 400, `${path} ${body}`);
      }
    }
    assert.equal((await readyz(a)).body.checks.service, 'serving', 'nothing was drained');
    assert.equal(a.host.isServing, true);
  });

  it('/readyz stays ready through a Redis outage, says degraded, and is ready once Redis is back', async () => {
    const a = nodes[0]!;
    await redis.kill();
    const down = await eventually(async () => {
      const r = await readyz(a);
      return r.body.checks.redis === 'down' ? r : null;
    });
    assert.deepEqual(
      [down.status, down.body.status, down.body.checks.database],
      [200, 'degraded', 'up'],
    );
    const restarted = performance.now();
    await redis.restart();
    const up = await eventually(async () => {
      const r = await readyz(a);
      return r.body.checks.redis === 'up' ? r : null;
    }, 15_000);
    process.stdout.write(
      `# /readyz said redis up ${Math.round(performance.now() - restarted)} ms after Redis answered\n`,
    );
    assert.deepEqual([up.status, up.body.status], [200, 'ready']);
  });

  const roomOf = (node: RoomsNode, roomId: string) =>
    ok(node, 'GET', `/api/v1/voice/rooms/${roomId}`, { as: 'alice' });
});
