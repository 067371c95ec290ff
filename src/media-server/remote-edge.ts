/**
 * An edge router of one of this server's rooms, held by another media server of the
 * cluster: this server is the room's origin and every producer of the origin is piped there
 * (a PipeTransport pair, SRTP-protected, the other end made by ./remote-edge-host.ts). The
 * nodes address the edge's transports and consumers here, by id, as any of the room's:
 * this server forwards those calls (./remote-edges.ts keeps the ids). The placement load
 * is kept here as for a local router (per receiving transport, its consumers, at least 1),
 * from the answers of the calls it forwarded and the other server's events about the
 * edge, so listeners spread by the same budget.
 *
 * Closing or pausing a producer on the origin closes or pauses its pipe consumer here at
 * once, so no RTP leaves for the edge: the server still decides who is heard everywhere. The
 * edge's pipe producer follows by a call, so its consumers there close or pause as well.
 */
import type { types } from 'mediasoup';
import type { Logger } from 'pino';
import type { CloseReason, MediaEvent } from './events.js';
import { appDataOf, peerOf } from './producer-data.js';
import type { PeerAnswer, PeerClient } from './peer-client.js';

/** A receiving transport of the edge, as this server counts it. */
interface Listener {
  readonly peerId: string | null;
  readonly consumers: Set<string>;
  weight: number;
}

/** How many ids of closes heard before their creation's answer are remembered. */
const HEARD_CLOSED_MAX = 1_000;

export interface RemoteEdgeDeps {
  readonly client: PeerClient;
  /** Where a transport or consumer of the edge is found by id (shared by every edge). */
  readonly index: Map<string, RemoteEdge>;
  readonly logger: Logger;
  /**
   * The edge is gone: closed (`lostPeers` null), or lost with its server or worker, with
   * the peers whose listeners were on it.
   */
  readonly gone: (edge: RemoteEdge, lostPeers: string[] | null, error: string) => void;
}

export class RemoteEdge {
  readonly role = 'edge' as const;
  /** The placement load, as for a local router (./audience.ts). */
  load = 0;
  closing?: CloseReason;
  readonly #listeners = new Map<string, Listener>();
  readonly #heardClosed = new Set<string>();
  /** Peers whose transports there closed with its worker (their loss comes after). */
  readonly #lostPeers = new Set<string>();
  /** Per origin producer, its pipe (made once) and the calls telling its state, in order. */
  readonly #pipes = new Map<string, Promise<void>>();
  readonly #tells = new Map<string, Promise<void>>();
  #ended = false;

  constructor(
    readonly roomCode: string,
    /** The edge router's id on its server. */
    readonly routerId: string,
    /** This server's end of the pipe (on the origin router). */
    private readonly pipeOut: types.PipeTransport,
    private readonly deps: RemoteEdgeDeps,
  ) {}

  /** The id of the server holding it. */
  get serverId(): string {
    return this.deps.client.server.id;
  }

  /** Its receiving transports, as counted here. */
  get transports(): number {
    return this.#listeners.size;
  }

  /** Makes a receiving transport on the edge for a listener placed on it. */
  async createTransport(body: Record<string, unknown>): Promise<PeerAnswer> {
    const answer = await this.deps.client.call('POST', '/internal/v1/transports', {
      ...body,
      room_code: undefined,
      router_id: this.routerId,
    });
    const id = createdId(answer);
    if (id !== null && !this.#ended) {
      const peerId = typeof body.peer_id === 'string' ? body.peer_id : null;
      this.#track(id);
      if (!this.#heardClosed.delete(id)) {
        this.#listeners.set(id, { peerId, consumers: new Set(), weight: 0 });
        this.#reweigh(id);
      }
    }
    return answer;
  }

  /** Consumes `producer` (of the origin) on a transport of the edge, through its pipe. */
  async createConsumer(
    body: { transport_id: string; producer_id: string; rtp_capabilities: unknown },
    producer: types.Producer,
  ): Promise<PeerAnswer> {
    await this.pipe(producer);
    const answer = await this.deps.client.call('POST', '/internal/v1/consumers', body);
    const id = createdId(answer);
    const listener = this.#listeners.get(body.transport_id);
    if (id !== null && listener && !this.#ended) {
      this.#track(id);
      if (!this.#heardClosed.delete(id)) {
        listener.consumers.add(id);
        this.#reweigh(body.transport_id);
      }
    }
    return answer;
  }

  /** Forwards a call about one of its transports or consumers. */
  forward(method: 'GET' | 'POST', path: string, body: unknown): Promise<PeerAnswer> {
    return this.deps.client.call(method, path, body);
  }

  /** Pipes an origin producer to the edge (once; made again after a failure). */
  pipe(producer: types.Producer): Promise<void> {
    const existing = this.#pipes.get(producer.id);
    if (existing) return existing;
    const piping = this.#pipe(producer);
    this.#pipes.set(producer.id, piping);
    piping.catch((err: unknown) => {
      if (this.#pipes.get(producer.id) === piping) this.#pipes.delete(producer.id);
      if (!this.#ended) {
        this.deps.logger.warn({ err, producer: producer.id, edge: this.routerId }, 'pipe failed');
      }
    });
    return piping;
  }

  async #pipe(producer: types.Producer): Promise<void> {
    const consumer = await this.pipeOut.consume({ producerId: producer.id });
    const path = `/internal/v1/edges/${this.routerId}/pipes`;
    try {
      await this.deps.client.data('POST', path, {
        producer_id: producer.id,
        kind: consumer.kind,
        rtp_parameters: consumer.rtpParameters,
        paused: consumer.producerPaused,
        peer_id: peerOf(producer),
        app_data: appDataOf(producer),
      });
    } catch (error) {
      consumer.close();
      throw error;
    }
    const gone = () => {
      this.#pipes.delete(producer.id);
      this.#tell(producer.id, 'close');
    };
    // The producer may have closed, or paused, while the edge was being told of it.
    if (consumer.closed) return gone();
    if (consumer.producerPaused) this.#tell(producer.id, 'pause');
    consumer.on('producerpause', () => this.#tell(producer.id, 'pause'));
    consumer.on('producerresume', () => this.#tell(producer.id, 'resume'));
    consumer.observer.once('close', gone);
  }

  /** Tells the edge's server what its pipe producer does, in order, retried a few times. */
  #tell(producerId: string, action: 'pause' | 'resume' | 'close'): void {
    if (this.#ended) return;
    const path = `/internal/v1/edges/${this.routerId}/pipes/${producerId}/${action}`;
    const before = this.#tells.get(producerId) ?? Promise.resolve();
    const told = before.then(async () => {
      for (let attempt = 0; attempt < 3 && !this.#ended; attempt++) {
        const answer = await this.deps.client.call('POST', path, {}).catch(() => null);
        if (answer && (answer.status < 300 || answer.status === 404)) return;
        await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
      }
    });
    this.#tells.set(producerId, told);
    void told.finally(() => {
      if (this.#tells.get(producerId) === told) this.#tells.delete(producerId);
    });
  }

  /** An event of the edge's server about this edge (the link routes them by router id). */
  onEvent(event: MediaEvent): void {
    switch (event.type) {
      case 'transport_closed':
        if (event.reason === 'worker_died' && event.peer_id) this.#lostPeers.add(event.peer_id);
        this.#listenerClosed(event.transport_id);
        return;
      case 'consumer_closed':
        this.#consumerClosed(event.transport_id, event.consumer_id);
        return;
      case 'router_closed':
        // A worker's death is a loss (its `routers_lost` comes after, and is not needed).
        if (event.reason === 'worker_died') this.lost(`edge worker died on ${this.serverId}`);
        else this.#end(null, `edge router closed (${event.reason})`);
        return;
      case 'routers_lost': {
        const lost = event.routers.find((r) => r.router_id === this.routerId);
        if (lost) this.#end(lost.peers, event.error);
        return;
      }
      default:
    }
  }

  /** Closes it, on its server (as far as it answers) and here. */
  close(reason: CloseReason): void {
    if (this.#ended) return;
    this.closing = reason;
    const path = `/internal/v1/routers/${this.routerId}/close`;
    void this.deps.client.call('POST', path, {}).catch(() => undefined);
    this.#end(null, reason);
  }

  /** Its server or worker is gone: its listeners are lost. */
  lost(error: string): void {
    this.#end([], error);
  }

  #end(reportedPeers: string[] | null, error: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.closing ??= reportedPeers ? 'worker_died' : 'router_closed';
    this.pipeOut.close();
    const peers = new Set([...(reportedPeers ?? []), ...this.#lostPeers]);
    for (const [id, listener] of this.#listeners) {
      if (listener.peerId) peers.add(listener.peerId);
      this.deps.index.delete(id);
      for (const consumer of listener.consumers) this.deps.index.delete(consumer);
    }
    this.#listeners.clear();
    this.deps.gone(this, reportedPeers ? [...peers] : null, error);
  }

  #track(id: string): void {
    this.deps.index.set(id, this);
  }

  #listenerClosed(transportId: string): void {
    const listener = this.#listeners.get(transportId);
    if (!listener) {
      this.#heardEarly(transportId);
      return;
    }
    this.#listeners.delete(transportId);
    this.deps.index.delete(transportId);
    for (const consumer of listener.consumers) this.deps.index.delete(consumer);
    this.load -= listener.weight;
  }

  #consumerClosed(transportId: string, consumerId: string): void {
    const listener = this.#listeners.get(transportId);
    if (!listener?.consumers.delete(consumerId)) {
      if (listener) this.#heardEarly(consumerId);
      return;
    }
    this.deps.index.delete(consumerId);
    this.#reweigh(transportId);
  }

  /** A close heard before the answer that created it: the answer must not count it. */
  #heardEarly(id: string): void {
    if (this.#heardClosed.size >= HEARD_CLOSED_MAX) {
      this.#heardClosed.delete(this.#heardClosed.values().next().value!);
    }
    this.#heardClosed.add(id);
  }

  #reweigh(transportId: string): void {
    const listener = this.#listeners.get(transportId);
    if (!listener) return;
    const weight = Math.max(1, listener.consumers.size);
    this.load += weight - listener.weight;
    listener.weight = weight;
  }
}

/** The id a creating call's answer names, or null when it failed. */
function createdId(answer: PeerAnswer): string | null {
  const data = answer.body.data as { id?: unknown } | undefined;
  return answer.status === 201 && typeof data?.id === 'string' ? data.id : null;
}
