/**
 * The node's side of the operations API: what `/readyz` probes (the database, Redis, the
 * cell host's state) and the drain/undrain control, wired from the node's own adapters.
 */
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { SqlBackend } from '../adapters/sql/database.js';
import type { CellHost } from '../cell/host.js';
import type { NodeControl } from '../edge/http/node-admin-routes.js';
import { Readiness } from '../edge/http/readiness.js';

export function nodeReadiness(host: CellHost, backend: SqlBackend, redis: Redis | null): Readiness {
  return new Readiness({
    database: () => sql`SELECT 1`.execute(backend.db),
    ...(redis
      ? {
          // A client that is not connected would queue the PING: answer at once instead, so
          // the check says "up" again as soon as the client is (ioredis reconnects by itself).
          redis: () =>
            redis.status === 'ready' ? redis.ping() : Promise.reject(new Error(redis.status)),
        }
      : {}),
    service: () => host.serviceState,
  });
}

export function nodeControl(host: CellHost): NodeControl {
  return {
    nodeId: host.nodeId,
    drain: () => host.handOver(),
    undrain: () => host.undrain(),
    state: () => host.serviceState,
  };
}
