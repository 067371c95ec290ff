/**
 * End to end: `src/main/server.ts` as real processes, on a temp SQLite file (one node) or on
 * the test MariaDB + Redis (two nodes).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
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
  EXIT_TIMEOUT_MS,
  READY_TIMEOUT_MS,
  ServerProcess,
  TEST_TIMEOUT_MS,
  getHealth,
  reportingOutput,
  waitForHealthy,
} from '../testing/server-process.js';

const uniqueId = (label: string): string => `e2e-${label}-${randomBytes(4).toString('hex')}`;

void describe('server.ts on SQLite (one node)', () => {
  let dir: string;
  const servers: ServerProcess[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-e2e-'));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await rm(dir, { recursive: true, force: true });
  });

  void it(
    'serves /healthz and /metrics, then drains and exits 0 on SIGTERM',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const port = await freePort();
      const nodeId = uniqueId('solo');
      const dbFile = path.join(dir, 'rooms.sqlite');
      const server = new ServerProcess('solo', {
        ROOMS_DB_URL: dbFile,
        ROOMS_HTTP_PORT: String(port),
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_LOG_LEVEL: 'warn',
        ROOMS_NODE_ID: nodeId,
      });
      servers.push(server);
      const baseUrl = `http://127.0.0.1:${port}`;

      await reportingOutput([server], async () => {
        const health = await waitForHealthy(server, baseUrl);
        const { media, ...node } = health as { media?: { available: boolean } };
        assert.deepEqual(node, { status: 'ok', node_id: nodeId, cells_loaded: 0 });
        assert.equal(typeof media?.available, 'boolean', 'healthz says whether media is there');

        const metrics = await fetch(`${baseUrl}/metrics`);
        assert.equal(metrics.status, 200);
        assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
        const text = await metrics.text();
        assert.match(text, /^rooms_cells_loaded\{kind="voice_room"\} 0$/m);
        // Default process metrics are registered on the same registry.
        assert.match(text, /^process_cpu_user_seconds_total /m);

        // The migrations ran against the file named by ROOMS_DB_URL.
        assert.ok(existsSync(dbFile), `${dbFile} was not created`);
        // No ROOMS_JWT_SECRET: embedded mode generated one beside the database.
        assert.ok(existsSync(path.join(dir, 'jwt-secret')), 'no jwt-secret beside the database');

        const stoppedAt = Date.now();
        assert.ok(server.child.kill('SIGTERM'));
        const exit = await server.waitForExit(EXIT_TIMEOUT_MS);
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.ok(Date.now() - stoppedAt < EXIT_TIMEOUT_MS);
        await assert.rejects(getHealth(baseUrl), 'HTTP still answers after exit');

        const db = new SqliteDatabase(dbFile, { readonly: true });
        try {
          const applied = db
            .prepare('SELECT name FROM kysely_migration ORDER BY name')
            .pluck()
            .all();
          // Other features add theirs alongside; these must be there.
          for (const name of ['0001_room_cell_runtime', '0003_accounts']) {
            assert.ok(applied.includes(name), `${name} not applied: ${applied.join(', ')}`);
          }
        } finally {
          db.close();
        }
        // Nothing but warnings or worse was logged, and no error among them.
        assert.doesNotMatch(server.stdout, /"level":(50|60)/);
      });
    },
  );

  void it(
    'exits 2 naming the variable on a bad configuration',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const server = new ServerProcess('bad-config', {
        ROOMS_DB_URL: path.join(dir, 'never.sqlite'),
        ROOMS_HTTP_PORT: 'abc',
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_LOG_LEVEL: 'warn',
      });
      servers.push(server);
      await reportingOutput([server], async () => {
        const exit = await server.waitForExit(READY_TIMEOUT_MS);
        assert.deepEqual(exit, { code: 2, signal: null });
        assert.match(server.stderr, /ROOMS_HTTP_PORT/);
        assert.doesNotMatch(server.stderr, /failed to start/);
        assert.ok(!existsSync(path.join(dir, 'never.sqlite')), 'the database was opened');
      });
    },
  );

  void it(
    'exits 2 naming ROOMS_GRPC_TOKEN in cluster mode without it',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const server = new ServerProcess('no-grpc-token', {
        ROOMS_DB_URL: path.join(dir, 'never.sqlite'),
        ROOMS_REDIS_URL: 'redis://127.0.0.1:6379',
        ROOMS_HTTP_PORT: '0',
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_LOG_LEVEL: 'warn',
      });
      servers.push(server);
      await reportingOutput([server], async () => {
        const exit = await server.waitForExit(READY_TIMEOUT_MS);
        assert.deepEqual(exit, { code: 2, signal: null });
        assert.match(server.stderr, /ROOMS_GRPC_TOKEN: required in cluster mode/);
        assert.ok(!existsSync(path.join(dir, 'never.sqlite')), 'the database was opened');
      });
    },
  );
});

void describe(
  'server.ts cluster (MariaDB + Redis, two nodes)',
  { skip: await clusterSkipReason() },
  () => {
    const redisUrl = testRedisUrl();
    const keyPrefix = testKeyPrefix();
    let database: TestDatabase | undefined;
    let redis: Redis | undefined;
    const servers: ServerProcess[] = [];

    before(async () => {
      database = await createTestDatabase();
      redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      redis?.disconnect();
      // Both clean-ups run even if one fails; the first failure is reported.
      const results = await Promise.allSettled([
        database?.drop(),
        deleteKeysWithPrefix(redisUrl, keyPrefix),
      ]);
      for (const r of results) if (r.status === 'rejected') throw r.reason;
    });

    void it(
      'two nodes share the database, register in Redis, and a drained node deregisters',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        assert.ok(database && redis);
        const client = redis;
        const nodes = await Promise.all(
          ['a', 'b'].map(async (label) => ({
            label,
            nodeId: uniqueId(label),
            port: await freePort(),
            advertiseAddr: `127.0.0.1:${await freePort()}`,
          })),
        );
        // Start both at once: they race the migrations and both must come up.
        for (const node of nodes) {
          servers.push(
            new ServerProcess(`node-${node.label}`, {
              ROOMS_DB_URL: database.url,
              ROOMS_REDIS_URL: redisUrl,
              ROOMS_KEY_PREFIX: keyPrefix,
              ROOMS_JWT_SECRET: 'e2e-shared-jwt-secret-of-at-least-32-bytes',
              ROOMS_NODE_ID: node.nodeId,
              ROOMS_ADVERTISE_ADDR: node.advertiseAddr,
              ROOMS_GRPC_HOST: '127.0.0.1',
              ROOMS_MEDIA_EMBEDDED: 'false',
              ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
              ROOMS_GRPC_PORT: node.advertiseAddr.split(':')[1]!,
              ROOMS_GRPC_TOKEN: 'e2e-cluster-grpc-token-0123456789abcdef',
              ROOMS_HTTP_PORT: String(node.port),
              ROOMS_HTTP_HOST: '127.0.0.1',
              ROOMS_LOG_LEVEL: 'warn',
            }),
          );
        }
        const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
        const [serverA, serverB] = servers as [ServerProcess, ServerProcess];
        const nodeKey = (nodeId: string) => `${keyPrefix}room:node:${nodeId}`;

        await reportingOutput(servers, async () => {
          const [healthA, healthB] = await Promise.all([
            waitForHealthy(serverA, `http://127.0.0.1:${a.port}`),
            waitForHealthy(serverB, `http://127.0.0.1:${b.port}`),
          ]);
          assert.deepEqual(withoutMedia(healthA), {
            status: 'ok',
            node_id: a.nodeId,
            cells_loaded: 0,
          });
          assert.deepEqual(withoutMedia(healthB), {
            status: 'ok',
            node_id: b.nodeId,
            cells_loaded: 0,
          });
          // No media server runs at ROOMS_MEDIA_URL: the nodes serve, and say media is missing.
          assert.equal(healthA.media?.available, false);

          assert.equal(await client.get(nodeKey(a.nodeId)), a.advertiseAddr);
          assert.equal(await client.get(nodeKey(b.nodeId)), b.advertiseAddr);
          // Registered with the lease TTL (10 s default), so a dead node disappears on its own.
          const ttl = await client.pttl(nodeKey(a.nodeId));
          assert.ok(ttl > 0 && ttl <= 10_000, `pttl ${ttl}`);

          assert.ok(serverA.child.kill('SIGTERM'));
          const exit = await serverA.waitForExit(EXIT_TIMEOUT_MS);
          assert.deepEqual(exit, { code: 0, signal: null });

          // Drain deregistered A at once (its TTL still had seconds to run); B is untouched.
          assert.equal(await client.get(nodeKey(a.nodeId)), null);
          assert.equal(await client.get(nodeKey(b.nodeId)), b.advertiseAddr);
          const b2 = await getHealth(`http://127.0.0.1:${b.port}`);
          assert.deepEqual(
            { ...b2, body: withoutMedia(b2.body) },
            {
              status: 200,
              body: { status: 'ok', node_id: b.nodeId, cells_loaded: 0 },
            },
          );
          assert.doesNotMatch(serverA.stdout + serverB.stdout, /"level":(50|60)/);
        });
      },
    );
  },
);

/** A /healthz body without its `media` report (checked on its own where it matters). */
function withoutMedia(health: unknown): unknown {
  const { media: _media, ...rest } = health as Record<string, unknown>;
  return rest;
}
