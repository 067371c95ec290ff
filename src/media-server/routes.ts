/**
 * The internal HTTP API the meeting module calls (`/internal/v1/*`, `/internal/info`) and the
 * public liveness probe (`/healthz`). Every internal route must carry the shared secret in
 * `X-Internal-Token`: the check is a hook of the plugin scope the internal routes live in, so
 * it runs for whatever request the router matched to them, however its path was spelled
 * (`%69nternal`, absolute-form request line, ...), and for no other route. Answers use the project's envelope (`data` on success,
 * `code`/`message`/`reason` on failure): 400 bad body, 401 token, 404 unknown id, 409 wrong
 * state, 503 no worker.
 */
import type { Recorder } from './recorder.js';
import { registerRecordingRoutes } from './recording-routes.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendOk } from '../shared/http-envelope.js';
import { secretEquals } from '../shared/secrets.js';
import type { MediaEventBus } from './events.js';
import { forwardRemote, registerEdgeRoutes, relay } from './edge-routes.js';
import type { PeerAnswer } from './peer-client.js';
import type { RouterEntry, TransportEntry } from './media-entries.js';
import { RemoteEdge } from './remote-edge.js';
import type { RoomRouter } from './room-routers.js';
import type { MediaRegistry } from './media-registry.js';
import {
  asDtls,
  asRtpCapabilities,
  asRtpParameters,
  connectTransportBody,
  consumerPreferencesBody,
  createConsumerBody,
  createProducerBody,
  createRouterBody,
  createTransportBody,
  drainBody,
  connectPlainBody,
  handle,
  idParams,
  parse,
  roomParams,
} from './schemas.js';
import { registerEventStream } from './event-stream.js';
import { appDataOf, peerOf } from './producer-data.js';
import type { WorkerPool } from './worker-pool.js';
import { errors } from '../shared/error-codes.js';

export interface MediaRoutesDeps {
  readonly registry: MediaRegistry;
  readonly pool: WorkerPool;
  readonly bus: MediaEventBus;
  readonly internalToken: string;
  readonly mediasoupVersion: string;
  readonly workerBin: { path: string; source: string };
  /** The drain flag: a draining server keeps its rooms and takes no new ones. */
  readonly drain: {
    draining(): boolean;
    set(draining: boolean): Promise<void>;
  };
  /** The room recordings made here, and their directory. */
  readonly recorder: Recorder;
  readonly recordingsDir: string;
}

function routerView(entry: RouterEntry) {
  return {
    router_id: entry.router.id,
    room_code: entry.roomCode,
    role: entry.role,
    rtp_capabilities: entry.router.rtpCapabilities,
    worker_index: entry.slot.index,
    worker_pid: entry.worker.pid,
  };
}

/**
 * One router of a room as its listing shows it: where it is and what it carries. An edge on
 * another server names that server (`media_server`; null here) and no worker.
 */
function roomRouterView(entry: RoomRouter) {
  if (entry instanceof RemoteEdge) {
    return {
      router_id: entry.routerId,
      role: entry.role,
      media_server: entry.serverId,
      worker_index: null,
      worker_pid: null,
      transports: entry.transports,
      load: entry.load,
    };
  }
  return {
    router_id: entry.router.id,
    role: entry.role,
    media_server: null,
    worker_index: entry.slot.index,
    worker_pid: entry.worker.pid,
    transports: entry.transports.size,
    load: entry.load,
  };
}

/** A new transport as its creator needs it. */
function transportView(entry: TransportEntry) {
  const { transport, routerEntry, direction } = entry;
  const common = { id: transport.id, router_id: routerEntry.router.id, direction };
  if (transport.type === 'plain') {
    const { localAddress, localIp, localPort } = transport.tuple;
    return { ...common, type: 'plain', ip: localAddress ?? localIp, port: localPort };
  }
  return {
    ...common,
    iceParameters: transport.iceParameters,
    iceCandidates: transport.iceCandidates,
    dtlsParameters: transport.dtlsParameters,
  };
}

export function registerMediaRoutes(app: FastifyInstance, deps: MediaRoutesDeps): void {
  const { pool } = deps;
  app.get('/healthz', async (_request, reply) => {
    const alive = pool.slots.filter((s) => s.alive).length;
    return reply.code(alive > 0 ? 200 : 503).send({
      status: alive === pool.slots.length ? 'ok' : alive > 0 ? 'degraded' : 'down',
      workers: pool.slots.length,
      workers_alive: alive,
    });
  });

  // An encapsulated scope (no fastify-plugin): its hook guards exactly the routes inside it.
  void app.register((internal, _options, done) => {
    internal.addHook('onRequest', (request, _reply, next) => {
      if (!secretEquals(request.headers['x-internal-token'], deps.internalToken)) {
        next(errors.INTERNAL_TOKEN_INVALID());
        return;
      }
      next();
    });
    registerInternalRoutes(internal, deps);
    done();
  });
}

const ok = (request: FastifyRequest, reply: FastifyReply, data: unknown, status = 200) =>
  sendOk(request, reply, data, status);
const idOf = (request: FastifyRequest) => parse(idParams, request.params).id;

/** Every `/internal/*` route; only ever registered inside the token-checking scope. */
function registerInternalRoutes(app: FastifyInstance, deps: MediaRoutesDeps): void {
  registerServerRoutes(app, deps);
  registerRouterRoutes(app, deps.registry);
  registerTransportRoutes(app, deps.registry);
  registerProducerRoutes(app, deps.registry);
  registerConsumerRoutes(app, deps.registry);
  registerEdgeRoutes(app, deps.registry);
  registerEventStream(app, deps.bus);
  registerRecordingRoutes(app, deps.recorder, deps.recordingsDir);
}

/** The server itself: what it runs and holds, and its drain flag. */
function registerServerRoutes(app: FastifyInstance, deps: MediaRoutesDeps): void {
  const { registry, pool, bus } = deps;
  app.get('/internal/info', async (request, reply) =>
    ok(request, reply, {
      mediasoup_version: deps.mediasoupVersion,
      worker_bin: deps.workerBin,
      workers: pool.slots.map((s) => ({
        index: s.index,
        pid: s.worker.pid,
        alive: s.alive,
        routers: s.routers,
      })),
      stats: registry.stats,
      events_seq: bus.lastSeq,
      draining: deps.drain.draining(),
    }),
  );
  // Drain (or undrain) without a restart: the directory hears it at once.
  app.post(
    '/internal/v1/drain',
    handle(async (request, reply) => {
      const { draining } = parse(drainBody, request.body ?? {});
      await deps.drain.set(draining ?? true);
      return ok(request, reply, { draining: deps.drain.draining() });
    }),
  );
}

/** Routers and the rooms they serve. */
function registerRouterRoutes(app: FastifyInstance, registry: MediaRegistry): void {
  // Routers: one per room code; a second create returns the same router (200, not 201).
  app.post(
    '/internal/v1/routers',
    handle(async (request, reply) => {
      const { room_code } = parse(createRouterBody, request.body);
      const { entry, created } = await registry.ensureRouter(room_code);
      return ok(request, reply, { ...routerView(entry), created }, created ? 201 : 200);
    }),
  );
  // The rooms that have a router (the nodes' janitor closes those of ended meetings).
  app.get('/internal/v1/rooms', async (request, reply) =>
    ok(request, reply, { room_codes: registry.roomCodes }),
  );
  app.get(
    '/internal/v1/routers/:id',
    handle(async (request, reply) =>
      ok(request, reply, routerView(registry.router(idOf(request)))),
    ),
  );
  app.get(
    '/internal/v1/rooms/:room_code/router',
    handle(async (request, reply) => {
      const { room_code } = parse(roomParams, request.params);
      return ok(request, reply, routerView(registry.routerOfRoom(room_code)));
    }),
  );
  // Every router of the room: its origin first, then its edges (./room-routers.ts).
  app.get(
    '/internal/v1/rooms/:room_code/routers',
    handle(async (request, reply) => {
      const { room_code } = parse(roomParams, request.params);
      return ok(request, reply, {
        routers: registry.routersOfRoom(room_code).map(roomRouterView),
      });
    }),
  );
  // A node reconciles against this: producers of a seat or mic session no longer current.
  app.get(
    '/internal/v1/rooms/:room_code/producers',
    handle(async (request, reply) => {
      const { room_code } = parse(roomParams, request.params);
      const producers = registry.producersOfRoom(room_code).map(({ producer }) => ({
        producer_id: producer.id,
        kind: producer.kind,
        paused: producer.paused,
        peer_id: peerOf(producer),
        app_data: appDataOf(producer),
      }));
      return ok(request, reply, { producers });
    }),
  );
  app.get(
    '/internal/v1/routers/:id/speakers',
    handle(async (request, reply) =>
      ok(request, reply, registry.router(idOf(request)).speakers.state),
    ),
  );
  app.post(
    '/internal/v1/routers/:id/close',
    handle(async (request, reply) => {
      registry.closeRouter(idOf(request));
      return ok(request, reply, { closed: true });
    }),
  );
}

function registerTransportRoutes(app: FastifyInstance, registry: MediaRegistry): void {
  // WebRTC transports.
  app.post(
    '/internal/v1/transports',
    handle(async (request, reply) => {
      const body = parse(createTransportBody, request.body);
      const peer = body.peer_id ?? null;
      const make = async (router: RouterEntry) =>
        transportView(
          body.type === 'plain'
            ? await registry.createPlainTransport(router, peer, body.direction)
            : await registry.createTransport(router, body.direction, peer),
        );
      if (body.router_id)
        return ok(request, reply, await make(registry.router(body.router_id)), 201);
      // A listener may be placed on an edge of the room on another server: made there.
      const made = await registry.onRouterFor<{ here?: object; there?: PeerAnswer }>(
        body.room_code ?? '',
        body.direction,
        async (router) => ({ here: await make(router) }),
        async (edge) => ({ there: await edge.createTransport(body) }),
      );
      return made.there ? relay(request, reply, made.there) : ok(request, reply, made.here, 201);
    }),
  );
  app.post(
    '/internal/v1/transports/:id/connect',
    { preHandler: forwardRemote(registry) },
    handle(async (request, reply) => {
      const id = idOf(request);
      const { transport } = registry.transport(id);
      if (transport.type === 'plain') {
        const { ip, port } = parse(connectPlainBody, request.body);
        await transport.connect({ ip, port });
      } else {
        const { dtls_parameters } = parse(connectTransportBody, request.body);
        await registry.connectTransport(id, asDtls(dtls_parameters));
      }
      return ok(request, reply, { connected: true });
    }),
  );
  app.post(
    '/internal/v1/transports/:id/close',
    { preHandler: forwardRemote(registry) },
    handle(async (request, reply) => {
      registry.closeTransport(idOf(request));
      return ok(request, reply, { closed: true });
    }),
  );
  app.get(
    '/internal/v1/transports/:id/stats',
    { preHandler: forwardRemote(registry) },
    handle(async (request, reply) => {
      const { transport } = registry.transport(idOf(request));
      return ok(request, reply, { stats: await transport.getStats() });
    }),
  );
}

function registerProducerRoutes(app: FastifyInstance, registry: MediaRegistry): void {
  // Producers.
  app.post(
    '/internal/v1/producers',
    handle(async (request, reply) => {
      const body = parse(createProducerBody, request.body);
      const { producer } = await registry.createProducer(
        body.transport_id,
        body.kind,
        asRtpParameters(body.rtp_parameters),
        body.paused ?? false,
        body.app_data,
      );
      return ok(request, reply, { id: producer.id, kind: producer.kind }, 201);
    }),
  );
  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/internal/v1/producers/:id/${action}`,
      handle(async (request, reply) => {
        const { producer } = registry.producer(idOf(request));
        await producer[action]();
        return ok(request, reply, { paused: producer.paused });
      }),
    );
  }
  app.post(
    '/internal/v1/producers/:id/close',
    handle(async (request, reply) => {
      registry.closeProducer(idOf(request));
      return ok(request, reply, { closed: true });
    }),
  );
  app.get(
    '/internal/v1/producers/:id/stats',
    handle(async (request, reply) => {
      const { producer } = registry.producer(idOf(request));
      return ok(request, reply, { stats: await producer.getStats() });
    }),
  );
}

function registerConsumerRoutes(app: FastifyInstance, registry: MediaRegistry): void {
  // Consumers: created paused; `resume` once the client has mounted the track.
  app.post(
    '/internal/v1/consumers',
    handle(async (request, reply) => {
      const body = parse(createConsumerBody, request.body);
      const edge = registry.remoteEdgeOf(body.transport_id);
      if (edge) {
        // Only a producer of the edge's room, on this server, is piped there.
        const { producer, transportEntry } = registry.producer(body.producer_id);
        if (transportEntry.routerEntry !== registry.routerOfRoom(edge.roomCode)) {
          throw errors.CANNOT_CONSUME(body.producer_id);
        }
        return relay(request, reply, await edge.createConsumer(body, producer));
      }
      const { consumer, producerId } = await registry.createConsumer(
        body.transport_id,
        body.producer_id,
        asRtpCapabilities(body.rtp_capabilities),
      );
      return ok(
        request,
        reply,
        {
          id: consumer.id,
          producerId,
          kind: consumer.kind,
          rtpParameters: consumer.rtpParameters,
          type: consumer.type,
          producerPaused: consumer.producerPaused,
          paused: consumer.paused,
        },
        201,
      );
    }),
  );
  app.post(
    '/internal/v1/consumers/:id/resume',
    { preHandler: forwardRemote(registry) },
    handle(async (request, reply) => {
      const { consumer } = registry.consumer(idOf(request));
      await consumer.resume();
      return ok(request, reply, { paused: consumer.paused });
    }),
  );
  // The viewer's layer (a simulcast consumer; mediasoup's bandwidth estimation may still go
  // lower) and whether anything is forwarded at all (a tile nobody sees). The layer first, so
  // a consumer this resumes starts on it rather than switching away from the top one.
  app.post(
    '/internal/v1/consumers/:id/preferences',
    { preHandler: forwardRemote(registry) },
    handle(async (request, reply) => {
      const body = parse(consumerPreferencesBody, request.body);
      const { consumer } = registry.consumer(idOf(request));
      const layered = consumer.type === 'simulcast' || consumer.type === 'svc';
      if (body.spatial_layer !== undefined && layered) {
        await consumer.setPreferredLayers({
          spatialLayer: body.spatial_layer,
          ...(body.temporal_layer === undefined ? {} : { temporalLayer: body.temporal_layer }),
        });
      }
      if (body.paused === true) await consumer.pause();
      if (body.paused === false) await consumer.resume();
      return ok(request, reply, {
        paused: consumer.paused,
        preferred_layers: consumer.preferredLayers ?? null,
      });
    }),
  );
  app.post(
    '/internal/v1/consumers/:id/close',
    { preHandler: forwardRemote(registry) },
    handle(async (request, reply) => {
      registry.closeConsumer(idOf(request));
      return ok(request, reply, { closed: true });
    }),
  );
  app.get(
    '/internal/v1/consumers/:id/stats',
    { preHandler: forwardRemote(registry) },
    handle(async (request, reply) => {
      const { consumer } = registry.consumer(idOf(request));
      return ok(request, reply, { stats: await consumer.getStats() });
    }),
  );
}
