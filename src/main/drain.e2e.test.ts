/**
 * A node process with loaded rooms (embedded SQLite): `/readyz` next to `/healthz`, the admin
 * drain and undrain over HTTP without a restart, and SIGTERM, which hands every room over
 * (each snapshotted at its last version) and exits 0 before ROOMS_DRAIN_TIMEOUT_MS forces it;
 * and a drain held up past that deadline (a client that never finishes its request keeps the
 * HTTP server from closing), after which the process exits 1 anyway, saying so.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { freePort } from '../testing/backends.js';
import {
  ServerProcess,
  TEST_TIMEOUT_MS,
  reportingOutput,
  waitForHealthy,
} from '../testing/server-process.js';

const ADMIN = 'drain-e2e-admin-token-0123456789';
const DRAIN_TIMEOUT_MS = 4_000;
const ROOMS = 10;

void describe('a node process drained by the operator and by SIGTERM', () => {
  let dir: string;
  let server: ServerProcess | undefined;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-drain-e2e-'));
  });
  after(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const nodeEnv = (port: number, dbFile: string, drainTimeoutMs: number) => ({
    ROOMS_DB_URL: dbFile,
    ROOMS_HTTP_HOST: '127.0.0.1',
    ROOMS_HTTP_PORT: String(port),
    ROOMS_GRPC_HOST: '127.0.0.1',
    ROOMS_GRPC_PORT: '0',
    ROOMS_ADMIN_TOKEN: ADMIN,
    ROOMS_DRAIN_TIMEOUT_MS: String(drainTimeoutMs),
    ROOMS_BCRYPT_COST: '4',
    ROOMS_LOG_LEVEL: 'warn',
    ROOMS_MEDIA_EMBEDDED: 'false',
    ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
  });

  void it(
    'exits 1 with the deadline log line when its drain cannot finish within ROOMS_DRAIN_TIMEOUT_MS',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const port = await freePort();
      const deadlineMs = 1_500;
      const node = new ServerProcess(
        'drain-stuck',
        nodeEnv(port, path.join(dir, 'stuck.sqlite'), deadlineMs),
      );
      const socket = new net.Socket();
      try {
        await reportingOutput([node], async () => {
          await waitForHealthy(node, `http://127.0.0.1:${port}`);
          // Half a request body: the server waits for the rest, so its close cannot finish.
          await new Promise<void>((resolve, reject) => {
            socket.once('error', reject);
            socket.connect(port, '127.0.0.1', () => resolve());
          });
          const body = '{"username":"ann"';
          socket.write(
            'POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
              `content-type: application/json\r\ncontent-length: ${body.length + 100}\r\n\r\n${body}`,
          );
          await new Promise((resolve) => setTimeout(resolve, 200));
          assert.ok(node.child.kill('SIGTERM'));
          const exit = await node.waitForExit(deadlineMs + 10_000);
          assert.deepEqual(exit, { code: 1, signal: null });
          const lines = node.stdout
            .split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => JSON.parse(line) as { msg: string; drainTimeoutMs?: number });
          assert.deepEqual(
            lines
              .filter((l) => l.msg === 'drain deadline passed, exiting')
              .map((l) => l.drainTimeoutMs),
            [deadlineMs],
          );
        });
      } finally {
        socket.destroy();
        await node.stop();
      }
    },
  );

  void it(
    'drains and serves again on the admin API, then exits 0 on SIGTERM with every room handed over',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const port = await freePort();
      const dbFile = path.join(dir, 'rooms.sqlite');
      const node = new ServerProcess('drain', nodeEnv(port, dbFile, DRAIN_TIMEOUT_MS));
      server = node;
      const base = `http://127.0.0.1:${port}`;
      const send = async (method: string, url: string, body?: unknown, token?: string) => {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: {
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(url.startsWith('/api/v1/admin/') ? { 'x-admin-token': ADMIN } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(5_000),
        });
        return { status: res.status, body: (await res.json()) as any };
      };

      await reportingOutput([node], async () => {
        await waitForHealthy(node, base);
        const ready = await send('GET', '/readyz');
        assert.deepEqual(ready, {
          status: 200,
          body: {
            status: 'ready',
            node_id: ready.body.node_id,
            checks: { database: 'up', redis: 'not_used', service: 'serving' },
          },
        });
        await send('POST', '/api/v1/auth/register', { username: 'ann', password: 'secret123' });
        const login = await send('POST', '/api/v1/auth/login', {
          username: 'ann',
          password: 'secret123',
        });
        const token = login.body.data.access_token as string;
        const rooms: string[] = [];
        const createRooms = async (n: number) => {
          for (let i = 0; i < n; i++) {
            const created = await send(
              'POST',
              '/api/v1/voice/rooms',
              { title: 'drain', seat_count: 4, request_id: `create-${rooms.length}` },
              token,
            );
            assert.equal(created.status, 201, JSON.stringify(created.body));
            const roomId = created.body.data.room_id as string;
            const joined = await send('POST', `/api/v1/voice/rooms/${roomId}/join`, {}, token);
            assert.equal(joined.body.code, 0, JSON.stringify(joined.body));
            rooms.push(roomId);
          }
        };
        await createRooms(ROOMS);

        const drained = await send('POST', '/api/v1/admin/node/drain', {});
        assert.equal(drained.status, 200, JSON.stringify(drained.body));
        assert.equal(drained.body.data.cells_handed_over, ROOMS);
        process.stdout.write(`# admin drain of ${ROOMS} rooms: ${drained.body.data.took_ms} ms\n`);
        const notReady = await send('GET', '/readyz');
        assert.deepEqual([notReady.status, notReady.body.status], [503, 'draining']);
        assert.equal((await send('GET', '/healthz')).status, 503, 'healthz says draining too');
        // One node alone: nobody else can take the room, so the caller is told to retry.
        const refused = await send('POST', `/api/v1/voice/rooms/${rooms[0]}/leave`, {}, token);
        assert.deepEqual([refused.status, refused.body.reason], [503, 'NODE_DRAINING']);

        const back = await send('POST', '/api/v1/admin/node/undrain', {});
        assert.equal(back.body.data.state, 'serving');
        assert.equal((await send('GET', '/readyz')).status, 200);
        await createRooms(ROOMS); // loaded again, on the same process

        const stoppedAt = performance.now();
        assert.ok(node.child.kill('SIGTERM'));
        const exit = await node.waitForExit(DRAIN_TIMEOUT_MS + 5_000);
        process.stdout.write(
          `# SIGTERM with ${ROOMS * 2} rooms to exit: ${Math.round(performance.now() - stoppedAt)} ms\n`,
        );
        // 1 would mean the drain deadline forced the exit.
        assert.deepEqual(exit, { code: 0, signal: null });
        const db = new SqliteDatabase(dbFile, { readonly: true });
        try {
          const rows = db
            .prepare('SELECT room_id, version, snapshot_version FROM room_cells')
            .all() as { room_id: string; version: number; snapshot_version: number }[];
          assert.equal(rows.length, ROOMS * 2);
          for (const row of rows) {
            assert.equal(row.snapshot_version, row.version, `${row.room_id} handed over`);
          }
        } finally {
          db.close();
        }
      });
    },
  );
});
