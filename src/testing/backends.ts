/**
 * Test-only helpers for the cluster integration tests (MariaDB + Redis on 127.0.0.1).
 *
 * Usage with node:test:
 *
 * ```ts
 * describe('sql store', { skip: await clusterSkipReason() }, () => { ... });
 * ```
 *
 * Isolation: every test gets its own database (`createTestDatabase`) and its own key prefix
 * (`testKeyPrefix`) on the shared Redis; tests that need FLUSHALL or server-wide state start
 * a private `redis-server` (`startPrivateRedis`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createConnection, type Connection } from 'mysql2/promise';

/** Tests must never skip in CI: a missing backend there is a failure, not a skip. */
export const inCi = process.env.CI === 'true';

const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const CHECK_TIMEOUT_MS = 1_000;

/** Server URL (no database) of the shared MariaDB used by tests. */
export function testMysqlUrl(): string {
  return process.env.ROOMS_TEST_MYSQL_URL ?? DEFAULT_MYSQL_URL;
}

/** URL of the shared Redis used by tests. */
export function testRedisUrl(): string {
  return process.env.ROOMS_TEST_REDIS_URL ?? DEFAULT_REDIS_URL;
}

/** Rejects with a timeout error if `promise` does not settle within `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens a MySQL connection that gives up after `timeoutMs`, never leaking a late one. */
export async function connectMysql(
  url: string,
  timeoutMs = CHECK_TIMEOUT_MS * 5,
): Promise<Connection> {
  const pending = createConnection({ uri: url, connectTimeout: timeoutMs });
  try {
    return await withTimeout(pending, timeoutMs, `MariaDB at ${describeUrl(url)}`);
  } catch (error) {
    // If the connection arrives after the timeout, close it instead of leaking it.
    pending.then(
      (connection) => connection.destroy(),
      () => undefined,
    );
    throw error;
  }
}

/** A Redis client that fails fast instead of retrying; callers must `disconnect()` it. */
function fastFailRedis(url: string, timeoutMs = CHECK_TIMEOUT_MS): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
  });
  // Errors surface through the rejected command promises; avoid ioredis' unhandled-error log.
  client.on('error', () => undefined);
  return client;
}

/**
 * Disconnects `client` unless it already ended: ioredis' disconnect() on an ended client
 * arms a 2 s timer that is never cleared and keeps the process alive.
 */
function closeRedis(client: Redis): void {
  if (client.status !== 'end') client.disconnect();
}

/** `host:port` of a URL, without credentials, for messages. */
function describeUrl(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}

/** True when MariaDB at `url` (default `ROOMS_TEST_MYSQL_URL`) answers within 1 s. */
export async function mariadbAvailable(url: string = testMysqlUrl()): Promise<boolean> {
  try {
    const connection = await connectMysql(url, CHECK_TIMEOUT_MS);
    try {
      await withTimeout(connection.query('SELECT 1'), CHECK_TIMEOUT_MS, 'MariaDB SELECT 1');
      return true;
    } finally {
      connection.destroy();
    }
  } catch {
    return false;
  }
}

/** True when Redis at `url` (default `ROOMS_TEST_REDIS_URL`) answers PING within 1 s. */
export async function redisAvailable(url: string = testRedisUrl()): Promise<boolean> {
  const client = fastFailRedis(url);
  try {
    const answer = await withTimeout(
      client.connect().then(() => client.ping()),
      CHECK_TIMEOUT_MS,
      'Redis PING',
    );
    return answer === 'PONG';
  } catch {
    return false;
  } finally {
    closeRedis(client);
  }
}

/**
 * `false` when MariaDB and Redis both answer, else a one-line reason to skip the suite.
 * In CI (`CI=true`) a missing backend throws instead: cluster tests never skip there.
 */
export async function clusterSkipReason(): Promise<string | false> {
  const [mariadb, redis] = await Promise.all([mariadbAvailable(), redisAvailable()]);
  if (mariadb && redis) return false;
  const missing = [
    ...(mariadb ? [] : [`MariaDB (${describeUrl(testMysqlUrl())})`]),
    ...(redis ? [] : [`Redis (${describeUrl(testRedisUrl())})`]),
  ].join(' and ');
  if (inCi) {
    throw new Error(`${missing} not reachable in CI: cluster tests must not be skipped there`);
  }
  return `${missing} not reachable (start them: see docs/testing.md "Running the cluster tests")`;
}

/** A throwaway MariaDB database; `drop()` is idempotent. */
export interface TestDatabase {
  /** `mysql://…/<name>`: the server URL with the database as its path. */
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** Creates a uniquely named utf8mb4 database `rooms_t_<ms>_<hex>` on the test MariaDB. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = testMysqlUrl();
  const name = `rooms_t_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const connection = await connectMysql(serverUrl);
  try {
    await connection.query(
      `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
  } finally {
    await connection.end();
  }

  const url = new URL(serverUrl);
  url.pathname = `/${name}`;

  let dropping: Promise<void> | undefined;
  const drop = (): Promise<void> => {
    dropping ??= (async () => {
      const admin = await connectMysql(serverUrl);
      try {
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await admin.end();
      }
    })();
    // A failed drop may be retried by the next call.
    dropping.catch(() => {
      dropping = undefined;
    });
    return dropping;
  };

  return { url: url.toString(), name, drop };
}

/** A fresh key prefix `rooms:t:<hex>:` isolating one test's keys on the shared Redis. */
export function testKeyPrefix(): string {
  return `rooms:t:${randomBytes(6).toString('hex')}:`;
}

/** Escapes Redis glob metacharacters so `prefix` matches literally in SCAN MATCH. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Deletes every key starting with `prefix` (SCAN MATCH + UNLINK in batches) and returns
 * how many were deleted. Refuses an empty prefix, which would mean the whole database.
 */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<number> {
  if (prefix.length === 0) throw new Error('deleteKeysWithPrefix: refusing an empty prefix');
  const client = fastFailRedis(redisUrl, CHECK_TIMEOUT_MS * 5);
  try {
    await client.connect();
    const match = `${escapeGlob(prefix)}*`;
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', match, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    closeRedis(client);
  }
}

/**
 * Ports handed out below the kernel's ephemeral range (32768–60999 on Linux): a port the
 * kernel picked for `listen(0)` is one it may soon give another test's outgoing connection
 * as its source port, and a child process that binds it a moment later then fails with
 * EADDRINUSE. Below the range only another listener can take it.
 */
const FREE_PORT_RANGE = { from: 20_000, to: 32_000 };

/** Binds `port` on 127.0.0.1 and releases it: the port if that worked, else null. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = address !== null && typeof address !== 'string' ? address.port : null;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * The ports this process handed out: never handed out twice. A test takes several before
 * its servers bind any (all free when asked), and a second draw of the same one made two
 * of its servers race for it (EADDRINUSE).
 */
const handedOut = new Set<number>();

/** A free TCP port on 127.0.0.1 (free when returned; another process may take it later). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const { from, to } = FREE_PORT_RANGE;
    const candidate = from + Math.floor(Math.random() * (to - from));
    if (handedOut.has(candidate)) continue;
    handedOut.add(candidate); // before the await: a concurrent call skips it
    if ((await tryPort(candidate)) !== null) return candidate;
    handedOut.delete(candidate);
  }
  const any = await tryPort(0);
  if (any === null || handedOut.has(any)) throw new Error('freePort: no free port on 127.0.0.1');
  handedOut.add(any);
  return any;
}

/** A `redis-server` owned by one test; `stop()` is idempotent. */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** Process id of the server (of the current one, after a restart). */
  readonly pid: number;
  /** Its working directory (removed by `stop()`). */
  readonly dir: string;
  /** Stops the server (SIGKILL by default: a crash); `restart()` brings it back. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port (empty: it keeps nothing); resolves once it answers. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 5_000;
const STOP_GRACE_MS = 2_000;

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once `child` has exited, or `false` after `ms`. */
export function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (hasExited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, ms);
    const onExit = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

/**
 * Stopping a private server's process (the test's own Redis or MariaDB): `kill` signals it
 * and escalates to SIGKILL after `graceMs`; `stop` sends SIGTERM once and removes its folder.
 * A test process that exits without `stop()` takes the server with it.
 */
export function privateProcess(
  current: () => ChildProcess | undefined,
  dir: string,
  graceMs: number,
): { kill: (signal?: NodeJS.Signals) => Promise<void>; stop: () => Promise<void> } {
  const killOnExit = (): void => {
    current()?.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const running = current();
    if (!running || hasExited(running)) return;
    running.kill(signal);
    if (!(await waitForExit(running, graceMs))) {
      running.kill('SIGKILL');
      await waitForExit(running, graceMs);
    }
  };
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await kill('SIGTERM');
      process.off('exit', killOnExit);
      await rm(dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  return { kill, stop };
}

/**
 * Starts a private `redis-server` (from PATH) on a free loopback port, without persistence,
 * for tests that need FLUSHALL or other server-wide commands. Waits until it answers PING.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  let lastError: unknown;
  // The free port may be taken between freePort() and redis binding it: retry a few times.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startPrivateRedisOnce(await freePort());
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function startPrivateRedisOnce(port: number): Promise<PrivateRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rooms-redis-'));
  const args = ['--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', '--port', String(port)];
  // Its output goes to a file, not a pipe: nothing of ours to drain or keep the loop alive.
  const logPath = path.join(dir, 'redis.log');
  const output = async (): Promise<string> =>
    (await readFile(logPath, 'utf8').catch(() => '')).slice(-4_000);
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let spawnError: Error | undefined;

  // A child whose spawn failed never ran: nothing to signal.
  const { kill, stop } = privateProcess(
    () => (spawnError === undefined ? child : undefined),
    dir,
    STOP_GRACE_MS,
  );

  /** Spawns the server and waits until it answers PING. */
  const launch = async (): Promise<void> => {
    const log = await open(logPath, 'a');
    spawnError = undefined;
    let started: ChildProcess;
    try {
      started = spawn('redis-server', [...args, '--dir', dir], {
        stdio: ['ignore', log.fd, log.fd],
      });
      // Attached before any await: a spawn failure (e.g. ENOENT) is emitted on the next tick.
      started.once('error', (error) => {
        spawnError = error;
      });
      child = started;
    } finally {
      await log.close();
    }
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      // Set by the 'error' listener, which TypeScript cannot see from here.
      const failed = spawnError as Error | undefined;
      if (failed !== undefined || hasExited(started)) {
        const why = failed?.message ?? `exited with ${started.exitCode ?? started.signalCode}`;
        throw new Error(
          `private redis-server on port ${port} failed to start: ${why}\n${await output()}`,
        );
      }
      if (await redisAvailable(url)) break;
      if (Date.now() >= deadline) {
        await kill();
        throw new Error(
          `private redis-server on port ${port} did not answer PING within ${START_TIMEOUT_MS} ms\n${await output()}`,
        );
      }
      await sleep(50);
    }
    // A forgotten stop() must not keep the test process alive; the exit hook still kills it.
    started.unref();
    if (started.pid === undefined) throw new Error('private redis-server has no pid');
  };

  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    port,
    get pid() {
      return child!.pid!;
    },
    dir,
    kill,
    async restart() {
      await kill();
      await launch();
    },
    stop,
  };
}
