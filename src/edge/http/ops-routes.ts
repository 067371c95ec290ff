/** Operational endpoints every node serves: liveness and Prometheus metrics. */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export interface OpsStatus {
  readonly nodeId: string;
  readonly draining: () => boolean;
  readonly cellsLoaded: () => number;
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
    });
  });
  app.get('/metrics', async (_req, reply) => {
    return reply.type(metrics.contentType).send(await metrics.metrics());
  });
}
