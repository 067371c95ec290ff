/**
 * Operational endpoints every node serves: liveness (with whether media is available; a
 * node without media still serves everything else, so it stays 200) and Prometheus metrics.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { documented } from './openapi.js';

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
  const health = documented({
    tag: 'ops',
    summary: 'Liveness: ok, or draining (stopping: send new work elsewhere)',
    access: 'public',
    responses: { 200: 'Serving', 503: 'Draining' },
    raw: {
      schema: {
        type: 'object',
        properties: {
          status: { type: 'string', enum: ['ok', 'draining'] },
          node_id: { type: 'string' },
          cells_loaded: { type: 'integer' },
        },
      },
    },
  });
  app.get('/healthz', health, async (_req, reply) => {
    const draining = status.draining();
    return reply.code(draining ? 503 : 200).send({
      status: draining ? 'draining' : 'ok',
      node_id: status.nodeId,
      cells_loaded: status.cellsLoaded(),
      ...(status.media ? { media: status.media() } : {}),
    });
  });
  const metricsDoc = documented({
    tag: 'ops',
    summary: 'Prometheus metrics',
    access: 'public',
    responses: { 200: 'The metrics in the Prometheus text format' },
    raw: { contentType: 'text/plain', schema: { type: 'string' } },
  });
  app.get('/metrics', metricsDoc, async (_req, reply) => {
    return reply.type(metrics.contentType).send(await metrics.metrics());
  });
}
