/**
 * The operator's control of one node (X-Admin-Token): drain it (it takes no new rooms and
 * hands its loaded ones over to the other nodes, `/readyz` answers 503) and return it to
 * service, without a restart. The call is answered by the node it reaches: a load balancer
 * in front must let the operator address one node.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errors } from '../../shared/error-codes.js';
import { sendOk } from '../../shared/http-envelope.js';
import { declaredReply } from '../declared-reply.js';
import * as ar from './admin-replies.js';
import { requireAdminToken } from './admin-token.js';
import { documented, jsonSchemaOf, replySchemaOf } from './openapi.js';

/** What the routes need of the node (the cell host, in src/main). */
export interface NodeControl {
  readonly nodeId: string;
  /** Resolves once the loaded rooms are handed over (or the drain deadline passed). */
  drain(): Promise<{ readonly cells: number; readonly timedOut: boolean; readonly tookMs: number }>;
  /** Takes rooms again; refused (NODE_DRAINING) once the node is shutting down. */
  undrain(): Promise<void>;
  /** `serving`, `draining`, `drained`, `stopping`, … */
  state(): string;
}

const noFields = z.object({}).strict();

const docs = {
  drain: documented({
    operationId: 'drainNode',
    tag: 'admin',
    summary: 'Drain this node: take no new rooms, hand the loaded ones over, /readyz 503',
    description:
      'Answers once every loaded room was snapshotted and its lease released (another node ' +
      'takes it at its next command), or when ROOMS_DRAIN_TIMEOUT_MS passed (`timed_out`). ' +
      'Calling it again while drained answers the same hand-over.',
    access: 'admin',
    body: jsonSchemaOf(noFields),
    data: replySchemaOf(ar.DrainReport),
    responses: {
      200: '`{node_id, state: "drained", cells_handed_over, timed_out, took_ms}`',
      503: 'NODE_DRAINING: the node is shutting down',
    },
  }),
  undrain: documented({
    operationId: 'undrainNode',
    tag: 'admin',
    summary: 'Return a drained node to service',
    access: 'admin',
    body: jsonSchemaOf(noFields),
    data: replySchemaOf(ar.NodeState),
    responses: {
      200: '`{node_id, state: "serving"}`',
      503: 'NODE_DRAINING: the node is shutting down',
    },
  }),
};

function parseEmpty(body: unknown): void {
  // No body at all is `{}`; a JSON `null` is a value, and not an object.
  const r = noFields.safeParse(body === undefined ? {} : body);
  if (!r.success) throw errors.INVALID_ARGUMENT('this call takes no fields');
}

export function registerNodeAdminRoutes(
  app: FastifyInstance,
  deps: { node: NodeControl; adminToken: string | null },
): void {
  const { node } = deps;
  const onRequest = requireAdminToken(deps.adminToken);

  app.post('/api/v1/admin/node/drain', { onRequest, ...docs.drain }, async (request, reply) => {
    parseEmpty(request.body);
    const report = await node.drain();
    const answer = {
      node_id: node.nodeId,
      state: node.state(),
      cells_handed_over: report.cells,
      timed_out: report.timedOut,
      took_ms: report.tookMs,
    };
    return sendOk(request, reply, declaredReply(ar.DrainReport, 'drainNode', answer));
  });

  app.post('/api/v1/admin/node/undrain', { onRequest, ...docs.undrain }, async (request, reply) => {
    parseEmpty(request.body);
    await node.undrain();
    const answer = { node_id: node.nodeId, state: node.state() };
    return sendOk(request, reply, declaredReply(ar.NodeState, 'undrainNode', answer));
  });
}
