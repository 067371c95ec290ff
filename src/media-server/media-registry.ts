/**
 * Every router, transport, producer and consumer of this media server, by id, and the one
 * place that creates and closes them. A room code has one origin router (idempotent
 * creation) and, for a large audience, edge routers (./room-routers.ts): a receiving
 * transport asked for by room code goes where ./audience.ts places it; a consumer on an
 * edge consumes the pipe of the origin's producer. Transports, producers and consumers are
 * found by id alone, as the meeting module addresses them. Each resource reports its close
 * exactly once on the event bus, with why it closed (resource-events.ts). The entries it
 * keeps are in media-entries.ts.
 */
import type { types } from 'mediasoup';
import type { Logger } from 'pino';
import type { MediaEventBus } from './events.js';
import { consumerClosed, consumerOpened, transportClosed, transportOpened } from './audience.js';
import type { LostRouter } from './events.js';
import type {
  ConsumerEntry,
  ProducerEntry,
  RouterEntry,
  RouterRole,
  TransportEntry,
} from './media-entries.js';
import {
  DEFAULT_EDGE_LINGER_MS,
  DEFAULT_ROUTER_CONSUMERS,
  MEDIA_CODECS,
  type MediaServerOptions,
} from './options.js';
import { producerEventFields, storedProducerData, type ProducerAppData } from './producer-data.js';
import { EdgeLinger } from './edge-linger.js';
import { eventScope, watchConsumer, watchProducer, watchTransport } from './resource-events.js';
import { RemoteEdge } from './remote-edge.js';
import { connectPipe, hostedEdge, openPipeEnd, type PipeTuple } from './remote-edge-host.js';
import type { RemoteEdges } from './remote-edges.js';
import { RoomRouters, type RoomRouter } from './room-routers.js';
import { RouterSpeakers } from './speakers.js';
import type { WorkerPool, WorkerSlot } from './worker-pool.js';
import { errors } from '../shared/error-codes.js';

/** Counts of open resources (`stats` in `/internal/info`). */
export interface MediaStats {
  readonly routers: number;
  readonly transports: number;
  readonly producers: number;
  readonly consumers: number;
}

export class MediaRegistry {
  readonly #routers = new Map<string, RouterEntry>();
  readonly #rooms = new Map<string, RoomRouters>();
  /** Creations in flight, so that concurrent creates for one room share one router. */
  readonly #creatingByRoom = new Map<string, Promise<RoomRouters>>();
  readonly #transports = new Map<string, TransportEntry>();
  readonly #producers = new Map<string, ProducerEntry>();
  readonly #consumers = new Map<string, ConsumerEntry>();
  /** Routers closed by a worker's death, reported together once the pool says it died. */
  readonly #lostBySlot = new Map<number, LostRouter[]>();
  /** Closes idle edges held here for rooms whose origin is on another server. */
  readonly #hostedLinger: EdgeLinger;
  /** This server's rooms' edges on other servers; null outside a cluster. */
  #remote: RemoteEdges | null = null;

  constructor(
    private readonly pool: WorkerPool,
    private readonly bus: MediaEventBus,
    private readonly options: MediaServerOptions,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.#hostedLinger = new EdgeLinger(options.edgeLingerMs ?? DEFAULT_EDGE_LINGER_MS);
  }

  /** In a cluster: rooms whose workers are all in use open edges on other servers too. */
  useRemoteEdges(remote: RemoteEdges): void {
    this.#remote = remote;
  }

  /** The edge on another server holding the transport or consumer `id`, if any. */
  remoteEdgeOf(id: string): RemoteEdge | undefined {
    return this.#remote?.edgeOf(id);
  }

  get stats(): MediaStats {
    return {
      routers: this.#routers.size,
      transports: this.#transports.size,
      producers: this.#producers.size,
      consumers: this.#consumers.size,
    };
  }

  /** The room's (origin) router, created on the least loaded worker if it has none. */
  async ensureRouter(roomCode: string): Promise<{ entry: RouterEntry; created: boolean }> {
    const existing = this.#rooms.get(roomCode);
    if (existing) return { entry: existing.origin, created: false };
    const pending = this.#creatingByRoom.get(roomCode);
    if (pending) return { entry: (await pending).origin, created: false };
    const creating = this.#createRoom(roomCode);
    this.#creatingByRoom.set(roomCode, creating);
    try {
      return { entry: (await creating).origin, created: true };
    } finally {
      this.#creatingByRoom.delete(roomCode);
    }
  }

  router(id: string): RouterEntry {
    const entry = this.#routers.get(id);
    if (!entry) throw errors.ROUTER_NOT_FOUND(id);
    return entry;
  }

  /** The room codes that have a router, in no particular order. */
  get roomCodes(): string[] {
    return [...this.#rooms.keys()];
  }

  /** The room's origin router. */
  routerOfRoom(roomCode: string): RouterEntry {
    return this.#room(roomCode).origin;
  }

  /** The room's routers: its origin, then its edges (on this server or others). */
  routersOfRoom(roomCode: string): RoomRouter[] {
    return this.#room(roomCode).all;
  }

  /** The room's routers on this server: its origin, then its edges here. */
  localRoutersOfRoom(roomCode: string): RouterEntry[] {
    return this.#room(roomCode).local;
  }

  /**
   * Runs `make` on the router a transport asked for by room code goes on: a sending one on
   * the origin (producers are made there), a receiving one where the room's audience has
   * room, counted there from its placement until `make` ends (when its transport counts).
   * With `remote`, the router may be an edge on another server, which `remote` makes it on.
   */
  async onRouterFor<T>(
    roomCode: string,
    direction: 'send' | 'recv',
    make: (router: RouterEntry) => Promise<T>,
    remote?: (edge: RemoteEdge) => Promise<T>,
  ): Promise<T> {
    const room = this.#room(roomCode);
    if (direction === 'send') return make(room.origin);
    const router = await room.routerForListener(remote !== undefined);
    try {
      return router instanceof RemoteEdge ? await remote!(router) : await make(router);
    } finally {
      room.unreserve(router);
    }
  }

  /**
   * Opens an edge here for a room whose origin is on the server `originServer`, with its end
   * of the pipe connected to the origin's (`pipe`). It closes when idle, as any edge.
   */
  async openHostedEdge(roomCode: string, originServer: string, pipe: PipeTuple) {
    const entry = await this.#createRouter(
      roomCode,
      'edge',
      (router) => RouterSpeakers.attach(router, roomCode, this.bus, this.now),
      originServer,
    );
    try {
      entry.pipeIn = await openPipeEnd(entry.router, this.options);
      await connectPipe(entry.pipeIn, pipe);
    } catch (error) {
      entry.closing = 'closed';
      entry.router.close();
      throw error;
    }
    this.#hostedLinger.transportLeft(entry);
    return hostedEdge(entry);
  }

  /** The ids of the edges held here for rooms whose origin is on `originServer`. */
  hostedEdgeIds(originServer: string): string[] {
    return [...this.#routers.values()]
      .filter((e) => e.originServer === originServer)
      .map((e) => e.router.id);
  }

  routersOnSlot(index: number): RouterEntry[] {
    return [...this.#routers.values()].filter((e) => e.slot.index === index);
  }

  closeRouter(id: string): void {
    const entry = this.router(id);
    entry.closing = 'closed';
    entry.router.close();
    this.logger.info({ router: id, room: entry.roomCode }, 'router closed explicitly');
  }

  async createTransport(
    routerEntry: RouterEntry,
    direction: 'send' | 'recv',
    peerId: string | null,
  ): Promise<TransportEntry<types.WebRtcTransport>> {
    const { router, slot } = routerEntry;
    const appData = { peerId, direction };
    const common = {
      preferUdp: true,
      initialAvailableOutgoingBitrate: 1_000_000,
      iceConsentTimeout: this.options.iceConsentTimeoutS ?? 30,
      appData,
    };
    const { listenIp: ip, announcedAddress, rtcMinPort: min, rtcMaxPort: max } = this.options;
    const transport = slot.webRtcServer
      ? await router.createWebRtcTransport({ ...common, webRtcServer: slot.webRtcServer })
      : await router.createWebRtcTransport({
          ...common,
          listenInfos: (['udp', 'tcp'] as const).map((protocol) => ({
            protocol,
            ip,
            ...(announcedAddress ? { announcedAddress } : {}),
            portRange: { min, max },
          })),
        });
    return this.#keepTransport({ transport, routerEntry, direction, peerId });
  }

  /**
   * A plain RTP transport (no ICE, no DTLS) for a process on this host, such as the media
   * tests and benches: `send` learns its sender from the first packet (`comedia`) and feeds
   * producers; `recv` is connected by the caller to where its consumers' RTP goes (a
   * loopback address). What it carries is created and reported like any.
   */
  async createPlainTransport(
    routerEntry: RouterEntry,
    peerId: string | null,
    direction: 'send' | 'recv' = 'send',
  ): Promise<TransportEntry<types.PlainTransport>> {
    const { rtcMinPort: min, rtcMaxPort: max } = this.options;
    const transport = await routerEntry.router.createPlainTransport({
      // Loopback only, whatever the WebRTC listen address: a `send` transport takes its
      // sender from the first packet, which must not be anyone's on the network.
      listenInfo: { protocol: 'udp', ip: '127.0.0.1', portRange: { min, max } },
      rtcpMux: true,
      comedia: direction === 'send',
      appData: { peerId, direction },
    });
    return this.#keepTransport({ transport, routerEntry, direction, peerId });
  }

  #keepTransport<T extends TransportEntry['transport']>(
    made: Pick<TransportEntry<T>, 'transport' | 'routerEntry' | 'direction' | 'peerId'>,
  ): TransportEntry<T> {
    const entry: TransportEntry<T> = { ...made, consumers: 0, weight: 0 };
    const { transport, routerEntry } = entry;
    this.#transports.set(transport.id, entry);
    transportOpened(entry);
    if (routerEntry.originServer) this.#hostedLinger.stop(routerEntry);
    watchTransport(entry, this.bus, () => {
      this.#transports.delete(transport.id);
      transportClosed(entry);
      if (routerEntry.worker.died && entry.peerId) routerEntry.lostPeers.add(entry.peerId);
      if (routerEntry.originServer) this.#hostedLinger.transportLeft(routerEntry);
      else this.#rooms.get(routerEntry.roomCode)?.transportLeft(routerEntry);
    });
    return entry;
  }

  transport(id: string): TransportEntry {
    const entry = this.#transports.get(id);
    if (!entry) throw errors.TRANSPORT_NOT_FOUND(id);
    return entry;
  }

  async connectTransport(id: string, dtlsParameters: types.DtlsParameters): Promise<void> {
    const { transport } = this.transport(id);
    if (transport.type !== 'webrtc') {
      throw errors.MEDIA_INVALID_STATE(`transport ${id} is not a WebRTC transport`);
    }
    await transport.connect({ dtlsParameters });
  }

  closeTransport(id: string): void {
    const entry = this.transport(id);
    entry.closing = 'closed';
    entry.transport.close();
  }

  async createProducer(
    transportId: string,
    kind: types.MediaKind,
    rtpParameters: types.RtpParameters,
    paused: boolean,
    appData?: ProducerAppData,
  ): Promise<ProducerEntry> {
    const transportEntry = this.transport(transportId);
    if (transportEntry.routerEntry.role === 'edge') {
      throw errors.MEDIA_INVALID_STATE(
        `transport ${transportId} is a listener's: produce on a sending one`,
      );
    }
    const producer = await transportEntry.transport.produce({
      kind,
      rtpParameters,
      paused,
      appData: storedProducerData(transportEntry.peerId, appData),
    });
    const entry: ProducerEntry = { producer, transportEntry };
    this.#producers.set(producer.id, entry);
    const fields = producerEventFields(eventScope(transportEntry), entry);
    this.bus.publish({ type: 'producer_created', ...fields });
    watchProducer(entry, this.bus, () => this.#producers.delete(producer.id));
    this.#rooms.get(transportEntry.routerEntry.roomCode)?.pipeEverywhere(producer);
    await transportEntry.routerEntry.speakers.add(producer, this.logger);
    return entry;
  }

  producer(id: string): ProducerEntry {
    const entry = this.#producers.get(id);
    if (!entry) throw errors.PRODUCER_NOT_FOUND(id);
    return entry;
  }

  /** The open producers on the room's router, oldest first; unknown room: not found. */
  producersOfRoom(roomCode: string): ProducerEntry[] {
    const routerEntry = this.routerOfRoom(roomCode);
    return [...this.#producers.values()].filter(
      (e) => e.transportEntry.routerEntry === routerEntry,
    );
  }

  closeProducer(id: string): void {
    const entry = this.producer(id);
    entry.closing = 'closed';
    entry.producer.close();
  }

  /** Creates a consumer, always paused: the client resumes it once its track is mounted. */
  async createConsumer(
    transportId: string,
    producerId: string,
    rtpCapabilities: types.RtpCapabilities,
  ): Promise<ConsumerEntry> {
    const transportEntry = this.transport(transportId);
    const source = await this.#sourceOn(transportEntry.routerEntry, producerId);
    // No router.canConsume first: consume checks the capabilities too and throws, and each
    // deep-copies them (the two copies were 4% of the node's busy time at 100 meetings × 8).
    let consumer: types.Consumer;
    try {
      consumer = await transportEntry.transport.consume({
        producerId: source,
        rtpCapabilities,
        paused: true,
        appData: { peerId: transportEntry.peerId },
      });
    } catch (error) {
      if (isCapabilityError(error)) throw errors.CANNOT_CONSUME(producerId);
      throw error;
    }
    const entry: ConsumerEntry = { consumer, transportEntry, producerId };
    this.#consumers.set(consumer.id, entry);
    consumerOpened(transportEntry);
    watchConsumer(entry, this.bus, () => {
      this.#consumers.delete(consumer.id);
      consumerClosed(transportEntry);
    });
    return entry;
  }

  /**
   * The id of what a transport on `router` consumes to receive the producer `producerId`:
   * the producer on its own router, its pipe on an edge of the same room (on an edge held
   * for another server's room, the pipe that server made). Another room's: cannot consume.
   */
  async #sourceOn(router: RouterEntry, producerId: string): Promise<string> {
    if (router.originServer) {
      const pipe = router.pipes.get(producerId);
      if (!pipe) throw errors.PRODUCER_NOT_FOUND(producerId);
      return (await pipe).id;
    }
    const producer = this.producer(producerId); // a 404 for an unknown producer first
    const origin = producer.transportEntry.routerEntry;
    if (origin === router) return producer.producer.id;
    const room = this.#rooms.get(router.roomCode);
    if (router.role !== 'edge' || room?.origin !== origin) {
      throw errors.CANNOT_CONSUME(producer.producer.id);
    }
    return (await room.pipeOf(router, producer.producer.id)).id;
  }

  consumer(id: string): ConsumerEntry {
    const entry = this.#consumers.get(id);
    if (!entry) throw errors.CONSUMER_NOT_FOUND(id);
    return entry;
  }

  closeConsumer(id: string): void {
    const entry = this.consumer(id);
    entry.closing = 'closed';
    entry.consumer.close();
  }

  /** Called by the pool after a worker died: reports the routers that died with it. */
  reportWorkerDied(slot: WorkerSlot, pid: number, error: Error): void {
    const routers = this.#lostBySlot.get(slot.index) ?? [];
    this.#lostBySlot.delete(slot.index);
    this.logger.error({ worker: slot.index, pid, routers: routers.length }, 'routers lost');
    this.bus.publish({
      type: 'routers_lost',
      worker_index: slot.index,
      worker_pid: pid,
      routers,
      error: error.message,
    });
  }

  #room(roomCode: string): RoomRouters {
    const room = this.#rooms.get(roomCode);
    if (!room) throw errors.ROOM_ROUTER_NOT_FOUND(roomCode);
    return room;
  }

  async #createRoom(roomCode: string): Promise<RoomRouters> {
    const origin = await this.#createRouter(roomCode, 'origin', (router) =>
      RouterSpeakers.attach(router, roomCode, this.bus, this.now),
    );
    const room: RoomRouters = new RoomRouters(origin, {
      openEdge: (remote) => this.#openEdge(room, remote),
      budget: this.options.routerConsumers ?? DEFAULT_ROUTER_CONSUMERS,
      lingerMs: this.options.edgeLingerMs ?? DEFAULT_EDGE_LINGER_MS,
      logger: this.logger,
    });
    this.#rooms.set(roomCode, room);
    if (origin.router.closed) this.#rooms.delete(roomCode);
    return room;
  }

  /**
   * A new edge of `room`: on another server when `remote` is allowed, one is configured and
   * every live worker here already holds one of the room's routers; else on a worker here.
   */
  async #openEdge(room: RoomRouters, remote: boolean): Promise<RoomRouter> {
    const { origin } = room;
    if (remote && this.#remote && this.#everyWorkerHolds(room)) {
      const edge = await this.#remote.open(origin, (gone, lostPeers, error) => {
        room.routerClosed(gone);
        if (lostPeers) this.#reportRemoteLoss(gone, lostPeers, error);
      });
      if (edge) return edge;
    }
    return this.#createRouter(origin.roomCode, 'edge', () => Promise.resolve(origin.speakers));
  }

  #everyWorkerHolds(room: RoomRouters): boolean {
    const held = new Set(room.local.map((r) => r.slot));
    return this.pool.slots.every((slot) => !slot.alive || held.has(slot));
  }

  /** An edge on another server was lost (its server or worker died): its listeners. */
  #reportRemoteLoss(edge: RemoteEdge, peers: string[], error: string): void {
    this.logger.error(
      { room: edge.roomCode, server: edge.serverId, router: edge.routerId, peers: peers.length },
      'remote edge router lost',
    );
    this.bus.publish({
      type: 'routers_lost',
      worker_index: -1,
      worker_pid: -1,
      routers: [
        {
          router_id: edge.routerId,
          room_code: edge.roomCode,
          role: 'edge',
          peers,
          media_server: edge.serverId,
        },
      ],
      error,
    });
  }

  async #createRouter(
    roomCode: string,
    role: RouterRole,
    speakersOf: (router: types.Router) => Promise<RouterSpeakers>,
    originServer?: string,
  ): Promise<RouterEntry> {
    const { router, slot } = await this.pool.createRouter(MEDIA_CODECS, { roomCode, role });
    try {
      const speakers = await speakersOf(router);
      const entry: RouterEntry = {
        router,
        roomCode,
        role,
        slot,
        worker: slot.worker,
        speakers,
        load: 0,
        transports: new Set(),
        pipes: new Map(),
        lostPeers: new Set(),
        ...(originServer ? { originServer } : {}),
      };
      this.#routers.set(router.id, entry);
      router.observer.once('close', () => this.#routerClosed(entry));
      this.logger.info(
        { router: router.id, room: roomCode, role, worker: slot.index },
        'router created',
      );
      return entry;
    } catch (error) {
      router.close();
      throw error;
    }
  }

  #routerClosed(entry: RouterEntry): void {
    const { router, roomCode, role, originServer } = entry;
    this.#routers.delete(router.id);
    if (originServer) {
      this.#hostedLinger.stop(entry);
    } else {
      const room = this.#rooms.get(roomCode);
      if (room?.origin === entry) this.#rooms.delete(roomCode);
      room?.routerClosed(entry);
    }
    const reason = entry.worker.died ? 'worker_died' : (entry.closing ?? 'router_closed');
    if (reason === 'worker_died') {
      const lost = this.#lostBySlot.get(entry.slot.index) ?? [];
      const peers = [...entry.lostPeers];
      const origin = originServer ? { origin_server: originServer } : {};
      lost.push({ router_id: router.id, room_code: roomCode, role, peers, ...origin });
      this.#lostBySlot.set(entry.slot.index, lost);
    }
    this.bus.publish({ type: 'router_closed', room_code: roomCode, router_id: router.id, reason });
  }
}

/**
 * What mediasoup's `consume` throws for capabilities it cannot serve: a TypeError for
 * malformed ones (its validation), an UnsupportedError when no codec matches the producer's.
 */
function isCapabilityError(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === 'TypeError' || error.name === 'UnsupportedError')
  );
}
