/**
 * What the media registry keeps for each router, transport, producer and consumer it made:
 * the mediasoup object and what we know about it, including why it is closing once we
 * know (`closing`), so that its close is reported with that reason.
 */
import type { types } from 'mediasoup';
import type { CloseReason } from './events.js';
import type { RouterSpeakers } from './speakers.js';
import type { WorkerSlot } from './worker-pool.js';

/** A router and what we know about it. */
export interface RouterEntry {
  readonly router: types.Router;
  readonly roomCode: string;
  readonly slot: WorkerSlot;
  readonly worker: types.Worker;
  readonly speakers: RouterSpeakers;
  closing?: CloseReason;
}

/** The transports the registry holds: WebRTC for clients, plain RTP for local feeders. */
export type RegistryTransport = types.WebRtcTransport | types.PlainTransport;

export interface TransportEntry<T extends RegistryTransport = RegistryTransport> {
  readonly transport: T;
  readonly routerEntry: RouterEntry;
  readonly direction: 'send' | 'recv';
  readonly peerId: string | null;
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
  closing?: CloseReason;
}
