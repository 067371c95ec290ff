/**
 * A node process whose Redis dies and comes back: its ioredis clients (coordination, bus
 * publisher, bus subscriber) never print ioredis' "Unhandled error event" to stderr, and log
 * one line per change of their connection's state (error, reconnecting, ready again), not
 * one per reconnect attempt.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { freePort, startPrivateRedis, type PrivateRedis } from '../testing/backends.js';
import {
  ServerProcess,
  TEST_TIMEOUT_MS,
  reportingOutput,
  waitForHealthy,
} from '../testing/server-process.js';

const ROLES = ['coordination', 'bus-publisher', 'bus-subscriber'];

interface LogLine {
  readonly msg?: string;
  readonly module?: string;
  readonly role?: string;
  readonly failedAttempts?: number;
}

function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

void describe('a node whose Redis goes away', () => {
  let dir: string;
  let redis: PrivateRedis;
  let server: ServerProcess | undefined;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-redis-outage-'));
    redis = await startPrivateRedis();
  });
  after(async () => {
    await server?.stop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  void it(
    'logs each state change of each client once and prints nothing to stderr',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const port = await freePort();
      server = new ServerProcess('node', {
        ROOMS_DB_URL: path.join(dir, 'rooms.sqlite'),
        ROOMS_REDIS_URL: redis.url,
        ROOMS_GRPC_TOKEN: 'redis-outage-grpc-token-0123456789',
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: '0',
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: String(port),
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
        ROOMS_LOG_LEVEL: 'info',
      });
      const node = server;
      await reportingOutput([node], async () => {
        await waitForHealthy(node, `http://127.0.0.1:${port}`);
        const redisLines = (from: number) =>
          logLines(node.stdout.slice(from)).filter((l) => l.module === 'redis');
        const mark = node.stdout.length;
        await redis.kill('SIGKILL');
        // Long enough for several reconnect attempts of each client.
        await sleep(2_500);
        assert.doesNotMatch(node.stderr, /Unhandled error event/);
        await redis.restart();
        await until(
          () =>
            redisLines(mark).filter((l) => l.msg === 'redis connection ready again').length ===
            ROLES.length,
          'every client ready again',
        );
        await sleep(200); // anything a client would still log about the outage

        assert.doesNotMatch(node.stderr, /Unhandled error event/);
        const connected = redisLines(0).filter((l) => l.msg === 'redis connected');
        assert.deepEqual(connected.map((l) => l.role).sort(), [...ROLES].sort());
        const outage = redisLines(mark);
        for (const role of ROLES) {
          const messages = outage.filter((l) => l.role === role).map((l) => l.msg);
          // A SIGKILL closes the socket: the client may see an error first or just the close.
          assert.ok(
            [
              ['redis connection error', 'redis reconnecting', 'redis connection ready again'],
              ['redis reconnecting', 'redis connection ready again'],
            ].some((expected) => JSON.stringify(expected) === JSON.stringify(messages)),
            `${role}: ${JSON.stringify(messages)}`,
          );
          const ready = outage.find((l) => l.role === role && l.failedAttempts !== undefined);
          assert.ok((ready?.failedAttempts ?? 0) >= 2, `${role} retried more than it logged`);
        }
        // The whole process, not only Redis' clients, stays quiet while Redis is down. The
        // media event stream is left out: no media server runs here, so it retries (and says
        // so) as often in any few seconds, Redis or not (a full run counted 4 retries).
        const all = logLines(node.stdout.slice(mark)).filter(
          (l) => l.msg !== 'media event stream dropped; reconnecting',
        );
        assert.ok(all.length <= 3 * ROLES.length + 6, JSON.stringify(all.map((l) => l.msg)));
      });
    },
  );
});
