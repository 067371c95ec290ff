/**
 * End to end: `src/main/server.ts` as real processes, on a temp SQLite file (one node) or on
 * the test MariaDB + Redis (two nodes).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
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

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** tsx compiles on the fly: start-up takes seconds on a small machine. */
const READY_TIMEOUT_MS = 20_000;
/** A drained node with no cells must exit well before this. */
const EXIT_TIMEOUT_MS = 5_000;
const TEST_TIMEOUT_MS = 90_000;

interface HealthBody {
  status: string;
  node_id: string;
  cells_loaded: number;
}

/** One `node --import tsx src/main/server.ts` child with its captured output. */
class ServerProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #killOnExit = (): void => {
    this.child.kill('SIGKILL');
  };

  constructor(
    readonly label: string,
    env: Record<string, string>,
  ) {
    // The parent's own ROOMS_* variables (and node:test's context) must not leak in.
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !k.startsWith('ROOMS_') && k !== 'NODE_TEST_CONTEXT',
      ),
    );
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts'], {
      cwd: REPO_ROOT,
      env: { ...inherited, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    // If the test process dies first, do not leave the server behind.
    process.once('exit', this.#killOnExit);
    void this.exited.finally(() => process.off('exit', this.#killOnExit)).catch(() => undefined);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Everything the child wrote, for failure reports. */
  output(): string {
    return `--- ${this.label} (pid ${this.child.pid}) stderr ---\n${this.stderr}\n--- ${this.label} stdout ---\n${this.stdout}`;
  }

  /** Resolves with the exit, or rejects after `ms`. */
  async waitForExit(ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const timeout = sleep(ms, 'timeout' as const, { ref: false });
    const result = await Promise.race([this.exited, timeout]);
    if (result === 'timeout') throw new Error(`${this.label} did not exit within ${ms} ms`);
    return result;
  }

  /** SIGTERM, then SIGKILL if it is still alive after `graceMs`. */
  async stop(graceMs = EXIT_TIMEOUT_MS): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    try {
      await this.waitForExit(graceMs);
    } catch {
      this.child.kill('SIGKILL');
      await this.waitForExit(graceMs).catch(() => undefined);
    }
  }
}

async function getHealth(baseUrl: string): Promise<{ status: number; body: HealthBody }> {
  const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
  return { status: res.status, body: (await res.json()) as HealthBody };
}

/** Polls /healthz until it answers 200; fails early if the process exits. */
async function waitForHealthy(
  server: ServerProcess,
  baseUrl: string,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<HealthBody> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    if (!server.alive) {
      throw new Error(`${server.label} exited (${server.child.exitCode}) before becoming healthy`);
    }
    try {
      const { status, body } = await getHealth(baseUrl);
      if (status === 200) return body;
      last = `HTTP ${status} ${JSON.stringify(body)}`;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`${server.label} not healthy within ${timeoutMs} ms: ${String(last)}`);
    }
    await sleep(150);
  }
}

/** Runs `body`; on failure prints the children's output before rethrowing. */
async function reportingOutput(
  servers: readonly (ServerProcess | undefined)[],
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (error) {
    for (const server of servers) if (server) process.stderr.write(`${server.output()}\n`);
    throw error;
  }
}

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
        assert.deepEqual(health, { status: 'ok', node_id: nodeId, cells_loaded: 0 });

        const metrics = await fetch(`${baseUrl}/metrics`);
        assert.equal(metrics.status, 200);
        assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
        const text = await metrics.text();
        assert.match(text, /^rooms_cells_loaded 0$/m);
        // Default process metrics are registered on the same registry.
        assert.match(text, /^process_cpu_user_seconds_total /m);

        // The migrations ran against the file named by ROOMS_DB_URL.
        assert.ok(existsSync(dbFile), `${dbFile} was not created`);

        const stoppedAt = Date.now();
        assert.ok(server.child.kill('SIGTERM'));
        const exit = await server.waitForExit(EXIT_TIMEOUT_MS);
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.ok(Date.now() - stoppedAt < EXIT_TIMEOUT_MS);
        await assert.rejects(getHealth(baseUrl), 'HTTP still answers after exit');

        const db = new SqliteDatabase(dbFile, { readonly: true });
        try {
          const applied = db.prepare('SELECT name FROM kysely_migration ORDER BY name').all();
          assert.deepEqual(applied, [{ name: '0001_room_cell_runtime' }]);
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
              ROOMS_NODE_ID: node.nodeId,
              ROOMS_ADVERTISE_ADDR: node.advertiseAddr,
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
          assert.deepEqual(healthA, { status: 'ok', node_id: a.nodeId, cells_loaded: 0 });
          assert.deepEqual(healthB, { status: 'ok', node_id: b.nodeId, cells_loaded: 0 });

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
          assert.deepEqual(b2, {
            status: 200,
            body: { status: 'ok', node_id: b.nodeId, cells_loaded: 0 },
          });
          assert.doesNotMatch(serverA.stdout + serverB.stdout, /"level":(50|60)/);
        });
      },
    );
  },
);
