/**
 * Operational endpoints every node serves: liveness (with whether media is available; a
 * node without media still serves everything else, so it stays 200) and Prometheus metrics.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface OpsStatus {
  readonly nodeId: string;
  readonly draining: () => boolean;
  readonly cellsLoaded: () => number;
  /** Whether meetings have audio and video here (absent: not reported). */
  readonly media?: () => {
    readonly available: boolean;
    readonly mode: string;
    readonly reason?: string;
  };
}

export function registerOpsRoutes(
  app: FastifyInstance,
  status: OpsStatus,
  metrics: Registry,
): void {
  app.get('/healthz', async (_req, reply) => {
    const draining = status.draining();
    return reply.code(draining ? 503 : 200).send({
      status: draining ? 'draining' : 'ok',
      node_id: status.nodeId,
      cells_loaded: status.cellsLoaded(),
      ...(status.media ? { media: status.media() } : {}),
    });
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.type(metrics.contentType).send(await metrics.metrics());
  });
}
