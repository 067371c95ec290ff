/**
 * What the media registry keeps for each router, transport, producer and consumer it made:
 * the mediasoup object and what we know about it, including why it is closing once we
 * know (`closing`), so that its close is reported with that reason.
 */
import type { types } from 'mediasoup';
import type { CloseReason } from './events.js';
import type { RouterSpeakers } from './speakers.js';
import type { WorkerSlot } from './worker-pool.js';

/**
 * A room's router: its `origin` (where every producer is made; one per room) or one of its
 * `edge` routers (listeners only; every producer of the origin is piped to it).
 */
export type RouterRole = 'origin' | 'edge';

/** A router and what we know about it. */
export interface RouterEntry {
  readonly router: types.Router;
  readonly roomCode: string;
  readonly role: RouterRole;
  readonly slot: WorkerSlot;
  readonly worker: types.Worker;
  /** The room's speaker observers: the origin's (an edge shares its origin's). */
  readonly speakers: RouterSpeakers;
  /**
   * The placement load: per receiving transport, its consumers, at least 1 (a listener
   * placed here counts before it consumes). See ./audience.ts.
   */
  load: number;
  /** Its open transports. */
  readonly transports: Set<TransportEntry>;
  /** An edge's pipe producers, by the id of the origin producer each one carries. */
  readonly pipes: Map<string, Promise<types.Producer>>;
  /** The peers whose transports died with the router's worker (for `routers_lost`). */
  readonly lostPeers: Set<string>;
  /**
   * An edge held here for a room whose origin is on another media server: that server's id,
   * and this edge's end of the pipe from it (./remote-edge-host.ts).
   */
  readonly originServer?: string;
  pipeIn?: types.PipeTransport;
  closing?: CloseReason;
}

/** The transports the registry holds: WebRTC for clients, plain RTP for local feeders. */
export type RegistryTransport = types.WebRtcTransport | types.PlainTransport;

export interface TransportEntry<T extends RegistryTransport = RegistryTransport> {
  readonly transport: T;
  readonly routerEntry: RouterEntry;
  readonly direction: 'send' | 'recv';
  readonly peerId: string | null;
  /** Its open consumers, and what it adds to its router's load (./audience.ts). */
  consumers: number;
  weight: number;
  closing?: CloseReason;
}

export interface ProducerEntry {
  /** Its `appData` is a `StoredProducerData` (peer id and the caller's app data). */
  readonly producer: types.Producer;
  readonly transportEntry: TransportEntry;
  closing?: CloseReason;
}

export interface ConsumerEntry {
  readonly consumer: types.Consumer;
  readonly transportEntry: TransportEntry;
  /** The room's producer it carries (on an edge, the consumer's own is that one's pipe). */
  readonly producerId: string;
  closing?: CloseReason;
}
