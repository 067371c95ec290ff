/**
 * The composition root: picks the adapters the config names and wires one node. Nothing
 * else in the code base chooses an adapter.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { collectDefaultMetrics } from 'prom-client';
import { MemoryLeaseManager } from '../adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../adapters/memory/memory-node-registry.js';
import { RedisLeaseManager } from '../adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../adapters/redis/redis-node-registry.js';
import { openSqlBackend, sqlFlavorOf, type SqlBackend } from '../adapters/sql/database.js';
import { SqlCellStore } from '../adapters/sql/sql-cell-store.js';
import { CellHost } from '../cell/host.js';
import type { LeaseManager, NodeRegistry } from '../cell/lease.js';
import { installEnvelopeErrors } from '../edge/http/envelope.js';
import { registerOpsRoutes } from '../edge/http/ops-routes.js';
import { systemClock } from '../shared/clock.js';
import type { Config } from './config.js';

export interface RoomsNode {
  readonly host: CellHost;
  readonly http: FastifyInstance;
  readonly sql: SqlBackend;
  /** The HTTP address actually bound (port 0 picks a free one). */
  readonly httpAddress: string;
  /** Drains the host, then closes HTTP, SQL and Redis. Idempotent. */
  close(): Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino({ level: config.logLevel, base: { node: config.nodeId } });
}

export async function startNode(config: Config, logger = createLogger(config)): Promise<RoomsNode> {
  const closers: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    const sql = await openSqlBackend(config.db.url, { poolSize: config.db.poolSize });
    closers.push(() => sql.close());
    const { lease, registry } = coordination(config, logger, closers);
    const host = new CellHost(
      { nodeId: config.nodeId, advertiseAddr: config.advertiseAddr, ...config.cell },
      { store: new SqlCellStore(sql), lease, registry, clock: systemClock, logger },
    );
    collectDefaultMetrics({ register: host.metrics.registry });

    const httpLogger: FastifyBaseLogger = logger.child({ module: 'http' });
    const http: FastifyInstance = Fastify({
      loggerInstance: httpLogger,
      genReqId: () => randomUUID(), // doubles as the envelope's trace_id
    });
    installEnvelopeErrors(http);
    registerOpsRoutes(
      http,
      {
        nodeId: config.nodeId,
        draining: () => host.isDraining,
        cellsLoaded: () => host.loadedCells.length,
      },
      host.metrics.registry,
    );
    // Closed in reverse: the host drains first while HTTP still answers (healthz says 503).
    closers.push(() => http.close());
    await host.start();
    closers.push(() => host.drain());
    const httpAddress = await http.listen({ host: config.http.host, port: config.http.port });

    let closing: Promise<void> | undefined;
    return { host, http, sql, httpAddress, close: () => (closing ??= closeAll()) };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** Redis when configured (cluster), otherwise in-process (one embedded node). */
function coordination(
  config: Config,
  logger: Logger,
  closers: (() => Promise<unknown>)[],
): { lease: LeaseManager; registry: NodeRegistry } {
  if (!config.redisUrl) {
    if (sqlFlavorOf(config.db.url) === 'mysql') {
      logger.warn('ROOMS_REDIS_URL is unset: run a single node, or set it to run several');
    }
    return {
      lease: new MemoryLeaseManager({ clock: systemClock }),
      registry: new MemoryNodeRegistry({ clock: systemClock }),
    };
  }
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
  closers.push(() => redis.quit());
  return {
    lease: new RedisLeaseManager({ redis, keyPrefix: config.keyPrefix }),
    registry: new RedisNodeRegistry({ redis, keyPrefix: config.keyPrefix }),
  };
}
