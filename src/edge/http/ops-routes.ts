/**
 * Operational endpoints every node serves: liveness (with whether media is available; a
 * node without media still serves everything else, so it stays 200), readiness (whether it
 * can take commands now, see ./readiness.ts) and Prometheus metrics.
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { documented } from './openapi.js';
import type { ReadinessReport } from './readiness.js';

export interface OpsStatus {
  readonly nodeId: string;
  readonly draining: () => boolean;
  readonly cellsLoaded: () => number;
  /** `/readyz`'s checks (./readiness.ts `Readiness`). */
  readonly readiness: { check(): Promise<ReadinessReport> };
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
    operationId: 'getHealth',
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
  const ready = documented({
    operationId: 'getReadiness',
    tag: 'ops',
    summary: 'Readiness: can this node take commands now (database, Redis, not draining)',
    description:
      'Not ready (503) while the node drains or its database does not answer. A Redis that ' +
      'does not answer leaves the node ready, reported `degraded` with `redis: "down"`: Redis ' +
      'is shared, so every node would turn unready at once and stay out after it came back. ' +
      'Each check is cached for 1 s.',
    access: 'public',
    responses: { 200: 'Ready (or degraded)', 503: 'Not ready: draining, or no database' },
    raw: {
      schema: {
        type: 'object',
        properties: {
          status: {
            type: 'string',
            enum: ['ready', 'degraded', 'starting', 'draining', 'unavailable'],
          },
          node_id: { type: 'string' },
          checks: {
            type: 'object',
            properties: {
              database: { type: 'string', enum: ['up', 'down'] },
              redis: { type: 'string', enum: ['up', 'down', 'not_used'] },
              service: {
                type: 'string',
                enum: ['starting', 'serving', 'draining', 'drained', 'stopping', 'stopped'],
              },
            },
          },
        },
      },
    },
  });
  app.get('/readyz', ready, async (_req, reply) => {
    const report = await status.readiness.check();
    return reply.code(report.ready ? 200 : 503).send({
      status: report.status,
      node_id: status.nodeId,
      checks: report.checks,
    });
  });
  const metricsDoc = documented({
    operationId: 'getMetrics',
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
