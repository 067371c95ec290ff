/**
 * Media events: what happens to transports, producers and routers without anyone asking
 * (a peer's ICE drops, a worker dies, someone speaks). Room logic turns them into RTC events
 * (audio_started / audio_stopped / room_exited); this module only reports them, in order,
 * in process (subscribe) and over `GET /internal/v1/events` (server-sent events).
 *
 * Every producer event (and every speaker entry naming a producer) carries the producer's
 * `app_data` as given at creation (`{}` when none), so a consumer of the stream can tell
 * which seat or mic session it is about without a lookup. `producer_rtp_started` is sent
 * once per producer, when its first RTP packet arrives (mediasoup's first `score`
 * notification, which the worker sends on a stream's first packet, paused or not): from
 * then on the sender's media really reaches the server. A pause and resume does not send
 * it again.
 */
import type { ProducerAppData } from './producer-data.js';

/** Ids every resource event carries, so a consumer needs no lookup. */
export interface MediaEventScope {
  readonly room_code: string;
  readonly router_id: string;
  /** Opaque id the caller gave at transport creation (e.g. the user id); null if none. */
  readonly peer_id: string | null;
}

/** What every producer event carries. */
export type ProducerEventFields = MediaEventScope & {
  readonly transport_id: string;
  readonly producer_id: string;
  readonly kind: 'audio' | 'video';
  /** The caller's `app_data` of the producer; `{}` when it gave none. */
  readonly app_data: ProducerAppData;
};

/** What every transport event carries: its id and the direction it was created with. */
export type TransportEventFields = MediaEventScope & {
  readonly transport_id: string;
  /** `send` carries the peer's producers, `recv` its consumers (plain transports: `send`). */
  readonly direction: 'send' | 'recv';
};

/** Why a resource went away. */
export type CloseReason =
  | 'closed' // closed through the API
  | 'transport_closed' // its transport closed
  | 'producer_closed' // (consumers) the producer it consumed closed
  | 'router_closed' // its router closed
  | 'idle' // (edge routers) its last listener left and none came back in time
  | 'worker_died'; // the mediasoup worker holding it died

/** A router lost with its worker, or (an edge) with the other media server holding it. */
export interface LostRouter {
  readonly router_id: string;
  readonly room_code: string;
  readonly role: 'origin' | 'edge';
  readonly peers: string[];
  /**
   * An edge of a room of this server held by another server (`routers_lost` with
   * `worker_index` -1): the id of that server.
   */
  readonly media_server?: string;
  /**
   * An edge held here for a room whose origin is on another server: that server's id. That
   * server reports the loss for its room (with `media_server`); the room's nodes skip this.
   */
  readonly origin_server?: string;
}

/** Every event the media server reports, discriminated by `type`. */
export type MediaEventBody =
  | (TransportEventFields & { type: 'transport_closed'; reason: CloseReason })
  | (TransportEventFields & { type: 'ice_disconnected' | 'ice_connected' | 'dtls_failed' })
  | (ProducerEventFields & {
      type: 'producer_created' | 'producer_paused' | 'producer_resumed' | 'producer_rtp_started';
    })
  | (ProducerEventFields & { type: 'producer_closed'; reason: CloseReason })
  | (MediaEventScope & {
      type: 'consumer_closed';
      transport_id: string;
      consumer_id: string;
      producer_id: string;
      reason: CloseReason;
    })
  | {
      type: 'router_closed';
      room_code: string;
      router_id: string;
      reason: CloseReason;
    }
  | {
      type: 'dominant_speaker';
      room_code: string;
      router_id: string;
      producer_id: string;
      peer_id: string | null;
      app_data: ProducerAppData;
    }
  | {
      type: 'audio_levels';
      room_code: string;
      router_id: string;
      /** dBov, -127 (silence) … 0 (loudest), loudest first. */
      volumes: {
        producer_id: string;
        peer_id: string | null;
        app_data: ProducerAppData;
        volume: number;
      }[];
    }
  | { type: 'silence'; room_code: string; router_id: string }
  | {
      type: 'routers_lost';
      worker_index: number;
      worker_pid: number;
      /**
       * Every router the dead worker held; their transports, producers, consumers are gone.
       * `role`: an `edge` router's loss concerns only `peers` (the peer ids of its
       * transports), who make their media again; the room's other members keep theirs.
       */
      routers: LostRouter[];
      error: string;
      /* `worker_index` and `worker_pid` are -1 for edges lost with another server. */
    }
  | { type: 'worker_restarted'; worker_index: number; worker_pid: number };

/** An event as delivered: the body plus a per-server sequence number and a timestamp. */
export type MediaEvent = MediaEventBody & { readonly seq: number; readonly at_ms: number };

export type MediaEventListener = (event: MediaEvent) => void;

/** How many past events a reconnecting stream can catch up on (`Last-Event-ID`). */
const REPLAY_SIZE = 1000;

/** In-process fan-out of media events, with a short replay buffer. */
export class MediaEventBus {
  #seq = 0;
  readonly #listeners = new Set<MediaEventListener>();
  readonly #recent: MediaEvent[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  publish(body: MediaEventBody): MediaEvent {
    const event = { ...body, seq: ++this.#seq, at_ms: this.now() } as MediaEvent;
    this.#recent.push(event);
    if (this.#recent.length > REPLAY_SIZE) this.#recent.shift();
    for (const listener of this.#listeners) {
      // One failing listener must not starve the others nor break the media path.
      try {
        listener(event);
      } catch {
        /* the listener's own problem */
      }
    }
    return event;
  }

  /** Calls `listener` for every later event; returns the unsubscribe function. */
  subscribe(listener: MediaEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Buffered events with `seq > afterSeq` (oldest first). */
  since(afterSeq: number): MediaEvent[] {
    return this.#recent.filter((e) => e.seq > afterSeq);
  }

  get lastSeq(): number {
    return this.#seq;
  }
}
