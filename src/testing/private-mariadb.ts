/**
 * Test helper: a MariaDB server owned by one test, on a free loopback port with a temporary
 * data directory, that the test may crash (`kill`) and bring back (`restart`) to see what a
 * node does while its database is gone. The shared server of the other tests is never
 * touched.
 *
 * ```ts
 * describe('outage', { skip: privateMariadbSkipReason() }, () => { ... });
 * const db = await startPrivateMariadb();
 * const url = await db.createDatabase('rooms');
 * await db.kill();      // SIGKILL: connections drop, new ones are refused
 * await db.restart();   // same port, same data
 * await db.stop();      // for good; the data directory is removed
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createConnection } from 'mysql2/promise';
import { freePort, hasExited, inCi, mariadbAvailable, privateProcess } from './backends.js';

const START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

export interface PrivateMariadb {
  /** `mysql://root@127.0.0.1:<port>`: the server, no database. */
  readonly url: string;
  readonly port: number;
  /** Its data directory and logs (removed by `stop()`). */
  readonly dir: string;
  /** Creates a database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (SIGKILL by default: a crash), keeping its data. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port with the same data; resolves once it answers. */
  restart(): Promise<void>;
  /** Stops it for good and removes its data directory. Idempotent. */
  stop(): Promise<void>;
}

/** The first of `names` found in PATH or the usual sbin directories. */
function findBinary(names: readonly string[]): string | null {
  const dirs = [
    ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/local/bin',
    '/usr/bin',
  ];
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      if (existsSync(candidate)) return candidate;
    }
  }
  return null;
}

const binaries = () => ({
  server: findBinary(['mariadbd', 'mysqld']),
  install: findBinary(['mariadb-install-db', 'mysql_install_db']),
});

/**
 * `false` when a private MariaDB can be started here, else why not. In CI (`CI=true`) a
 * missing binary throws instead: these tests must not skip there.
 */
export function privateMariadbSkipReason(): string | false {
  const { server, install } = binaries();
  if (server && install) return false;
  const reason = 'mariadbd or mariadb-install-db not found (apt-get install mariadb-server)';
  if (inCi) throw new Error(`${reason}: tests that own a MariaDB must not be skipped in CI`);
  return reason;
}

/** Runs `command` to its end, its output appended to `logPath`; rejects on a non-zero exit. */
async function run(command: string, args: readonly string[], logPath: string): Promise<void> {
  const log = await open(logPath, 'a');
  try {
    const child = spawn(command, args, { stdio: ['ignore', log.fd, log.fd] });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0) {
      const tail = (await readFile(logPath, 'utf8').catch(() => '')).slice(-4_000);
      throw new Error(`${path.basename(command)} exited with ${code}\n${tail}`);
    }
  } finally {
    await log.close();
  }
}

/**
 * Initialises a data directory and starts `mariadbd` on a free loopback port, without grant
 * tables (any user, no password: it listens on 127.0.0.1 only and lives for one test).
 * `serverArgs` are added to the server's command line (e.g. `--innodb-lock-wait-timeout=1`).
 */
export async function startPrivateMariadb(
  options: { serverArgs?: readonly string[] } = {},
): Promise<PrivateMariadb> {
  const { server, install } = binaries();
  if (!server || !install) throw new Error('mariadbd or mariadb-install-db not found');
  const dir = await mkdtemp(path.join(tmpdir(), 'rooms-mariadb-'));
  const datadir = path.join(dir, 'data');
  const logPath = path.join(dir, 'server.log');
  // A private temporary directory: at start mariadbd deletes every `#sql*` file in its tmpdir,
  // and the default (/tmp) holds the shared server's temporary tables, whose queries then fail.
  const privateTmp = path.join(dir, 'tmp');
  await mkdir(privateTmp);
  // mariadbd refuses to run as root unless told to.
  const asUser = process.getuid?.() === 0 ? [`--user=${userInfo().username}`] : [];
  // Small, and quick to start and to recover after a crash.
  const common = [
    '--no-defaults',
    `--datadir=${datadir}`,
    `--tmpdir=${privateTmp}`,
    ...asUser,
    '--innodb-buffer-pool-size=16M',
    '--innodb-log-file-size=4M',
  ];
  try {
    await run(
      install,
      [...common, '--auth-root-authentication-method=normal', '--skip-test-db'],
      logPath,
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }

  let port = 0;
  let child: ChildProcess | null = null;
  const { kill, stop } = privateProcess(() => child ?? undefined, dir, STOP_GRACE_MS);

  const spawnServer = async (): Promise<void> => {
    const log = await open(logPath, 'a');
    let spawnError: Error | undefined;
    const started = spawn(
      server,
      [
        ...common,
        `--port=${port}`,
        `--socket=${path.join(dir, 'mariadb.sock')}`,
        `--pid-file=${path.join(dir, 'mariadb.pid')}`,
        '--bind-address=127.0.0.1',
        '--skip-grant-tables',
        '--skip-name-resolve',
        '--skip-log-bin',
        // Written to the OS at each COMMIT: survives the SIGKILL of a crash test.
        '--innodb-flush-log-at-trx-commit=2',
        ...(options.serverArgs ?? []),
      ],
      { stdio: ['ignore', log.fd, log.fd] },
    );
    await log.close();
    started.once('error', (error) => {
      spawnError = error;
    });
    started.unref();
    child = started;
    const url = `mysql://root@127.0.0.1:${port}`;
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (spawnError || hasExited(started)) {
        const tail = (await readFile(logPath, 'utf8').catch(() => '')).slice(-4_000);
        const why = spawnError?.message ?? `exited with ${started.exitCode ?? started.signalCode}`;
        throw new Error(`private mariadbd on port ${port} failed to start: ${why}\n${tail}`);
      }
      if (await mariadbAvailable(url)) return;
      if (Date.now() >= deadline) {
        started.kill('SIGKILL');
        throw new Error(
          `private mariadbd on port ${port} did not answer in ${START_TIMEOUT_MS} ms`,
        );
      }
      await sleep(50);
    }
  };

  // The free port may be taken between freePort() and the server binding it: try again.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await spawnServer();
      break;
    } catch (error) {
      await kill();
      if (attempt >= 2) {
        await stop();
        throw error;
      }
    }
  }

  const url = `mysql://root@127.0.0.1:${port}`;
  return {
    url,
    port,
    dir,
    async createDatabase(name) {
      const connection = await createConnection({ uri: url });
      try {
        await connection.query(
          `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
        );
      } finally {
        await connection.end();
      }
      return `${url}/${name}`;
    },
    kill,
    async restart() {
      await kill();
      await spawnServer();
    },
    stop,
  };
}
