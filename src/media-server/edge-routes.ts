/**
 * The internal routes of edges between media servers:
 * - what this server does as the holder of another server's room edge
 *   (./remote-edge-host.ts): open one with its end of the pipe, list those of an origin
 *   server (its liveness probe), pipe an origin producer in, pause, resume or close it;
 * - what it does as the origin of a room with an edge elsewhere (./remote-edge.ts): a call
 *   about a transport or consumer of that edge is forwarded to its server, and the answer
 *   given back as that server gave it.
 * Only ever registered inside the token-checking scope of ./routes.ts.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preHandlerAsyncHookHandler,
} from 'fastify';
import { sendOk, traceIdOf } from '../shared/http-envelope.js';
import type { MediaRegistry } from './media-registry.js';
import type { PeerAnswer } from './peer-client.js';
import { pipeAction, pipeIn, tupleOf } from './remote-edge-host.js';
import type { RemoteEdge } from './remote-edge.js';
import {
  asRtpParameters,
  edgesQuery,
  handle,
  idParams,
  openEdgeBody,
  parse,
  pipeInBody,
  pipeParams,
} from './schemas.js';

/** Gives back another server's answer as it was, under this request's trace id. */
export function relay(request: FastifyRequest, reply: FastifyReply, answer: PeerAnswer) {
  return reply.code(answer.status).send({ ...answer.body, trace_id: traceIdOf(request) });
}

/**
 * A pre-handler of the by-id routes of transports and consumers: an id of an edge on
 * another server is answered there.
 */
export function forwardRemote(registry: MediaRegistry): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const { id } = parse(idParams, request.params);
    const edge: RemoteEdge | undefined = registry.remoteEdgeOf(id);
    if (!edge) return;
    const method = request.method === 'GET' ? 'GET' : 'POST';
    // The route's own path, whatever spelling reached it.
    const path = request.routeOptions.url!.replace(':id', encodeURIComponent(id));
    // Answered: returning the reply ends the request here (Fastify's early response).
    return relay(request, reply, await edge.forward(method, path, request.body));
  };
}

export function registerEdgeRoutes(app: FastifyInstance, registry: MediaRegistry): void {
  app.post(
    '/internal/v1/edges',
    handle(async (request, reply) => {
      const body = parse(openEdgeBody, request.body);
      const edge = await registry.openHostedEdge(body.room_code, body.origin_server, body.pipe);
      const view = { router_id: edge.router.id, worker_index: edge.slot.index };
      return sendOk(request, reply, { ...view, pipe: tupleOf(edge.pipeIn) }, 201);
    }),
  );
  app.get(
    '/internal/v1/edges',
    handle(async (request, reply) => {
      const { origin_server } = parse(edgesQuery, request.query);
      return sendOk(request, reply, { router_ids: registry.hostedEdgeIds(origin_server) });
    }),
  );
  app.post(
    '/internal/v1/edges/:id/pipes',
    handle(async (request, reply) => {
      const { id } = parse(idParams, request.params);
      const body = parse(pipeInBody, request.body);
      const producer = await pipeIn(registry.router(id), {
        ...body,
        rtp_parameters: asRtpParameters(body.rtp_parameters),
      });
      return sendOk(request, reply, { pipe_producer_id: producer.id }, 201);
    }),
  );
  app.post(
    '/internal/v1/edges/:id/pipes/:producer_id/:action',
    handle(async (request, reply) => {
      const { id, producer_id, action } = parse(pipeParams, request.params);
      await pipeAction(registry.router(id), producer_id, action);
      return sendOk(request, reply, {
        [action === 'close' ? 'closed' : 'paused']: action !== 'resume',
      });
    }),
  );
}
