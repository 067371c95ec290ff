/**
 * Realtime across processes: two node processes (the real composition root, see
 * `testing/e2e-node.ts`) on MariaDB + Redis, and a third node in this process that owns a
 * room and commits to it. WebSocket clients on nodes A and B must receive that room's
 * events, in order, through Redis pub/sub.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisRealtimeBus } from '../adapters/redis/redis-bus.js';
import { RedisLeaseManager } from '../adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../adapters/redis/redis-node-registry.js';
import { openSqlBackend, type SqlBackend } from '../adapters/sql/database.js';
import { SqlCellStore } from '../adapters/sql/sql-cell-store.js';
import { CellHost } from '../cell/host.js';
import { counterDomain } from '../cell/testing/counter-domain.js';
import { fastConfig, silentLogger } from '../cell/testing/harness.js';
import { TestClient, testTokens } from '../edge/ws/testing/ws-client.js';
import { systemClock } from '../shared/clock.js';
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
import { RealtimePublisher } from './publisher.js';

const JWT_SECRET = 'realtime-e2e-jwt-secret-of-at-least-32-bytes';
const counter = counterDomain();

void describe(
  'realtime across node processes (MariaDB + Redis)',
  { skip: await clusterSkipReason() },
  () => {
    const redisUrl = testRedisUrl();
    const keyPrefix = testKeyPrefix();
    const tokens = testTokens(JWT_SECRET);
    const servers: ServerProcess[] = [];
    const clients: TestClient[] = [];
    let database: TestDatabase | undefined;
    let sql: SqlBackend | undefined;
    let redis: Redis | undefined;
    let bus: RedisRealtimeBus | undefined;
    let owner: CellHost | undefined;

    before(async () => {
      database = await createTestDatabase();
      sql = await openSqlBackend(database.url, { poolSize: 4 }); // migrates before the nodes start
    });
    after(async () => {
      for (const c of clients) c.close();
      await owner?.drain();
      await Promise.all(servers.map((s) => s.stop()));
      await bus?.close();
      redis?.disconnect();
      await sql?.close();
      const results = await Promise.allSettled([
        database?.drop(),
        deleteKeysWithPrefix(redisUrl, keyPrefix),
      ]);
      for (const r of results) if (r.status === 'rejected') throw r.reason;
    });

    /** The third node: owns the room and publishes its commits to Redis. */
    const startOwner = async () => {
      redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
      bus = RedisRealtimeBus.connect(redisUrl, keyPrefix, silentLogger);
      const publisher = new RealtimePublisher({ bus, logger: silentLogger });
      owner = new CellHost(
        { ...fastConfig, leaseTtlMs: 10_000, nodeId: 'owner', advertiseAddr: '127.0.0.1:1' },
        {
          store: new SqlCellStore(sql!),
          lease: new RedisLeaseManager({ redis, keyPrefix }),
          registry: new RedisNodeRegistry({ redis, keyPrefix }),
          clock: systemClock,
          logger: silentLogger,
          onCommitted: (batch) => publisher.onCommitted(batch),
        },
      );
      owner.register(counter);
      await owner.start();
      return owner;
    };

    const startNodeProcess = async (label: string) => {
      const port = await freePort();
      const server = new ServerProcess(
        `node-${label}`,
        {
          ROOMS_DB_URL: database!.url,
          ROOMS_REDIS_URL: redisUrl,
          ROOMS_KEY_PREFIX: keyPrefix,
          ROOMS_JWT_SECRET: JWT_SECRET,
          ROOMS_NODE_ID: `rt-${label}-${randomBytes(3).toString('hex')}`,
          ROOMS_GRPC_HOST: '127.0.0.1',
          ROOMS_GRPC_PORT: '0',
          ROOMS_GRPC_TOKEN: 'e2e-cluster-grpc-token-0123456789abcdef',
          ROOMS_MEDIA_EMBEDDED: 'false',
          ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
          ROOMS_HTTP_PORT: String(port),
          ROOMS_HTTP_HOST: '127.0.0.1',
          ROOMS_LOG_LEVEL: 'warn',
        },
        'src/realtime/testing/e2e-node.ts',
      );
      servers.push(server);
      return { server, port };
    };

    const connect = async (port: number, token: string) => {
      const client = await TestClient.connect(
        `ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(token)}`,
      );
      clients.push(client);
      return client;
    };

    void it(
      'clients on nodes A and B receive, in order, the events of a room owned by another node',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        const [a, b] = await Promise.all([startNodeProcess('a'), startNodeProcess('b')]);
        await reportingOutput(servers, async () => {
          await Promise.all([
            waitForHealthy(a.server, `http://127.0.0.1:${a.port}`),
            waitForHealthy(b.server, `http://127.0.0.1:${b.port}`),
          ]);
          const host = await startOwner();
          const key = { appCode: 'default', roomId: `e2e-${randomBytes(4).toString('hex')}` };
          await host.execute(counter, key, { type: 'Add', amount: 1 }); // v1: before anyone follows

          const refused = await connect(a.port, 'not-a-token');
          assert.equal((await refused.waitClosed()).code, 4001);

          const onA = await connect(a.port, await tokens.sign('101'));
          const onB = await connect(b.port, await tokens.sign('102'));
          for (const client of [onA, onB]) {
            const ack = await client.request('room.subscribe', { room_id: key.roomId });
            assert.deepEqual(
              [ack.code, ack.data],
              [0, { app_code: 'default', room_id: key.roomId }],
            );
          }
          // v2..v41: one by one, then 20 at once (group commit: several versions per batch).
          for (let i = 0; i < 20; i++) await host.execute(counter, key, { type: 'Add', amount: 1 });
          await Promise.all(
            Array.from({ length: 20 }, () =>
              host.execute(counter, key, { type: 'Add', amount: 1 }),
            ),
          );
          const expected = Array.from({ length: 40 }, (_, i) => i + 2);
          for (const client of [onA, onB]) {
            await client.until(() => client.events('Added').length >= 40, 10_000);
            const frames = client.events('Added');
            assert.deepEqual(
              frames.map((f) => f.data.room_version),
              expected,
            );
            assert.deepEqual(
              frames.map((f) => f.data.prev_room_version),
              expected.map((v) => v - 1),
              'prev_room_version chains every frame to the one before',
            );
            assert.deepEqual(
              frames.slice(1).map((f) => f.data.prev_event_id),
              frames.slice(0, -1).map((f) => f.data.event_id),
            );
            assert.ok(
              frames.every((f) => f.data.room_id === key.roomId && f.code === 0),
              'frames of the room',
            );
          }
        });
      },
    );
  },
);
