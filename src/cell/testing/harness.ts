/**
 * Test harness: a backend (SQL + lease + registry) and hosts running the counter domain
 * on it. The same tests run on SQLite + in-memory and on MariaDB + Redis.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import pino from 'pino';
import { MemoryLeaseManager } from '../../adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../../adapters/memory/memory-node-registry.js';
import { createRedisClient } from '../../adapters/redis/redis-client.js';
import { RedisLeaseManager } from '../../adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../../adapters/redis/redis-node-registry.js';
import { openSqlBackend, type SqlBackend } from '../../adapters/sql/database.js';
import { SqlCellStore } from '../../adapters/sql/sql-cell-store.js';
import { systemClock } from '../../shared/clock.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import type { CommittedBatch } from '../cell.js';
import type { CellStore } from '../cell-store.js';
import type { SqlStoreTypes } from '../../adapters/sql/sql-store-types.js';
import type { CellDomain } from '../domain.js';
import { CellHost, type CellHostConfig } from '../host.js';
import type { LeaseManager, NodeRegistry } from '../lease.js';
import { counterDomain, counterTablesSql } from './counter-domain.js';

export interface TestBackend {
  readonly name: string;
  /** True when hosts can hold concurrent transactions (MariaDB), false for SQLite. */
  readonly concurrentTransactions: boolean;
  /** SQL for one host: its own pool on MariaDB (like a separate process), shared on SQLite. */
  sqlForHost(): Promise<SqlBackend>;
  /** A connection to inspect rows. */
  readonly inspect: SqlBackend;
  /** Lease + registry for one host; `redisUrl` points it at another Redis (cluster only). */
  coordination(redisUrl?: string): {
    lease: LeaseManager;
    registry: NodeRegistry;
    close(): Promise<void>;
  };
  close(): Promise<void>;
}

export const silentLogger = pino({ level: process.env.ROOMS_TEST_LOG ?? 'silent' });

export const fastConfig: Omit<CellHostConfig, 'nodeId' | 'advertiseAddr'> = {
  leaseTtlMs: 900,
  snapshotEvery: 10,
  maxBatch: 256,
  idleAfterMs: 60_000,
  timerTickMs: 25,
  sweepIntervalMs: 100,
  drainTimeoutMs: 5_000,
};

async function withCounterTables(backend: SqlBackend): Promise<SqlBackend> {
  for (const ddl of counterTablesSql) await sql.raw(ddl).execute(backend.db);
  return backend;
}

export async function sqliteMemoryBackend(): Promise<TestBackend> {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-sqlite-'));
  const shared = await withCounterTables(await openSqlBackend(join(dir, 'rooms.sqlite')));
  const lease = new MemoryLeaseManager({ clock: systemClock });
  const registry = new MemoryNodeRegistry({ clock: systemClock });
  return {
    name: 'SQLite + in-memory',
    concurrentTransactions: false,
    sqlForHost: () => Promise.resolve(shared),
    inspect: shared,
    coordination: () => ({ lease, registry, close: () => Promise.resolve() }),
    async close() {
      await shared.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function mariadbRedisBackend(redisUrl = testRedisUrl()): Promise<TestBackend> {
  const database = await createTestDatabase();
  const inspect = await withCounterTables(await openSqlBackend(database.url, { poolSize: 4 }));
  const keyPrefix = testKeyPrefix();
  const opened: SqlBackend[] = [];
  const clients: Redis[] = [];
  return {
    name: 'MariaDB + Redis',
    concurrentTransactions: true,
    async sqlForHost() {
      const backend = await openSqlBackend(database.url, { poolSize: 8 });
      opened.push(backend);
      return backend;
    },
    inspect,
    coordination(url = redisUrl) {
      const redis = createRedisClient(url, { maxRetriesPerRequest: 1 }, silentLogger, 'test');
      clients.push(redis);
      return {
        lease: new RedisLeaseManager({ redis, keyPrefix }),
        registry: new RedisNodeRegistry({ redis, keyPrefix }),
        close: () => {
          redis.disconnect();
          return Promise.resolve();
        },
      };
    },
    async close() {
      for (const b of opened) await b.close();
      for (const r of clients) r.disconnect();
      await inspect.close();
      await deleteKeysWithPrefix(redisUrl, keyPrefix).catch(() => 0);
      await database.drop();
    },
  };
}

export const counter = counterDomain({ charges: true });

export interface TestHost {
  readonly host: CellHost;
  /** Crash: no drain, no release (leases expire by TTL). Once ended, neither does anything. */
  kill(): Promise<void>;
  drain(): Promise<void>;
}

let hostSeq = 0;

export async function startHost(
  backend: TestBackend,
  options: {
    nodeId?: string;
    config?: Partial<CellHostConfig>;
    wrapLease?: (lease: LeaseManager) => LeaseManager;
    /** Stands between the host and its SQL store (e.g. to hold a commit's answer). */
    wrapStore?: (store: SqlCellStore) => CellStore<SqlStoreTypes>;
    redisUrl?: string;
    /** Sees the host's own SQL backend before the host starts (e.g. to pause its commits). */
    withSql?: (sql: SqlBackend) => void;
    onCommitted?: (batch: CommittedBatch) => void;
    /** More room kinds to register beside the counter (each with its own state types). */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- heterogeneous kinds
    domains?: readonly CellDomain<any, any, any, SqlStoreTypes>[];
  } = {},
): Promise<TestHost> {
  const nodeId = options.nodeId ?? `node-${++hostSeq}`;
  const sqlBackend = await backend.sqlForHost();
  options.withSql?.(sqlBackend);
  const coordination = backend.coordination(options.redisUrl);
  const lease = options.wrapLease ? options.wrapLease(coordination.lease) : coordination.lease;
  const host = new CellHost(
    { nodeId, advertiseAddr: `127.0.0.1:${10_000 + hostSeq}`, ...fastConfig, ...options.config },
    {
      store: options.wrapStore
        ? options.wrapStore(new SqlCellStore(sqlBackend))
        : new SqlCellStore(sqlBackend),
      lease,
      registry: coordination.registry,
      clock: systemClock,
      logger: silentLogger,
      ...(options.onCommitted ? { onCommitted: options.onCommitted } : {}),
    },
  );
  host.register(counter);
  for (const domain of options.domains ?? []) host.register(domain);
  await host.start();
  // A host ends once: a kill after a drain (a suite's cleanup) does nothing.
  let ended: Promise<void> | undefined;
  const end = (how: () => Promise<void>) => (ended ??= how().then(() => coordination.close()));
  return {
    host,
    kill: () => end(() => host.abort()),
    drain: () => end(() => host.drain()),
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `check` returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 5_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(20);
  }
}
