/**
 * What the room-kind-agnostic media signalling (./media-handlers.ts) needs: the resources
 * each user holds (Redis in cluster mode, in memory in embedded mode), and the rules of the
 * room's kind (who may use media, who may produce what, how producers are announced).
 */
import type { CellKey } from '../../cell/lease.js';
import type { MediaKind, TransportDirection } from '../../media-cluster/media-orchestrator.js';
import type { MediaRoomKind } from '../../media-cluster/media-servers.js';
import type { AppError } from '../../shared/errors.js';

/**
 * What a producer carries: a microphone or a camera (the default of its kind), or a shared
 * screen's video and audio (meetings only).
 */
export type ProducerSource = 'microphone' | 'camera' | 'screen' | 'screen_audio';

/** The source a producer of `kind` has when its client names none. */
export const defaultSource = (kind: MediaKind): ProducerSource =>
  kind === 'audio' ? 'microphone' : 'camera';

/**
 * One room kind's media rules. Every method throws the kind's refusals as AppErrors (e.g.
 * 你当前未在会议中 for a meeting, 用户不在房间 for a voice room).
 */
export interface RoomMediaRules {
  readonly kind: MediaRoomKind;
  /** The payload key that names the room (`room_code` for meetings, `room_id`). */
  readonly roomField: 'room_code' | 'room_id';
  /** The kind's event names start with it (`meeting`, `voice`). */
  readonly eventPrefix: string;
  /** The event announcing a producer opened or closed (`…producer.new`). */
  readonly producerNewEvent: string;
  /** The user may use media in the room now; the media server its router is on. */
  access(appCode: string, roomId: string, userId: string): Promise<{ mediaServer: string | null }>;
  /**
   * The user may produce `kind` in the room now (re-checked against the room's state); the
   * app data the producer carries (a voice seat's `mic_session_id`).
   */
  mayProduce(
    appCode: string,
    roomId: string,
    userId: string,
    kind: MediaKind,
    source: ProducerSource,
  ): Promise<Readonly<Record<string, string>>>;
  /** The payload of `producerNewEvent`. */
  producerFrame(
    roomId: string,
    userId: string,
    producerId: string,
    kind: MediaKind,
    closed: boolean,
    source?: ProducerSource,
  ): Record<string, unknown>;
  /** What a transport request of a socket that does not follow the room answers. */
  notJoined(): AppError;
}

/**
 * Each record read back names its holder: the node process whose socket made it
 * ({@link MediaHolders.self}; absent for records written before holders were kept, and in
 * embedded mode).
 */
export interface TransportRecord {
  readonly id: string;
  readonly direction: TransportDirection;
  readonly holder?: string | undefined;
}
export interface ProducerRecord {
  readonly id: string;
  readonly kind: MediaKind;
  /** Kept with the room's live producers (for late joiners); absent: the kind's default. */
  readonly source?: ProducerSource | undefined;
  readonly holder?: string | undefined;
}
export interface ConsumerRecord {
  readonly id: string;
  readonly producerId: string;
  readonly holder?: string | undefined;
}

/** What one user holds in one room. */
export interface UserMediaResources {
  readonly transports: readonly TransportRecord[];
  readonly producers: readonly ProducerRecord[];
  readonly consumers: readonly ConsumerRecord[];
}

/** Ids to forget, by kind (all optional). */
export interface MediaResourceIds {
  readonly transports?: readonly string[];
  readonly producers?: readonly string[];
  readonly consumers?: readonly string[];
}

/** A producer of the room that has not been closed through the signalling. */
export interface LiveProducer {
  readonly userId: string;
  readonly producerId: string;
  readonly kind: MediaKind;
  /** Absent in records written before sources were kept: the kind's default. */
  readonly source?: ProducerSource | undefined;
}

/**
 * The media resources each user holds in each room, of every kind (the meeting seed's
 * `resources:{room}:{user}` set): for ownership checks, for the clean-up on leave and on
 * disconnect, and for late joiners (the room's live producers). Every record lives `ttlMs`
 * (1 h by default) after the last write or {@link RoomMediaState.touch} of its user in
 * that room, so nothing outlives a forgotten room. Each method is atomic.
 */
export interface RoomMediaState {
  addTransport(meeting: CellKey, userId: string, transport: TransportRecord): Promise<void>;
  /** Also enters the meeting's live producers. */
  addProducer(meeting: CellKey, userId: string, producer: ProducerRecord): Promise<void>;
  /** Also indexes the consumer by its user, for `meeting.consume.resume {consumer_id}`. */
  addConsumer(meeting: CellKey, userId: string, consumer: ConsumerRecord): Promise<void>;
  /** Empty lists when the user holds nothing there. */
  resources(meeting: CellKey, userId: string): Promise<UserMediaResources>;
  /** Drops these records of the user (and their indexes); unknown ids are ignored. */
  forget(meeting: CellKey, userId: string, ids: MediaResourceIds): Promise<void>;
  /** Drops every record of the user in the meeting. */
  clear(meeting: CellKey, userId: string): Promise<void>;
  /** The meeting's live producers, of every user. */
  liveProducers(meeting: CellKey): Promise<LiveProducer[]>;
  /** The meeting (room code) of one of this user's consumers, or null if not the user's. */
  consumerRoom(appCode: string, userId: string, consumerId: string): Promise<string | null>;
  /** Restarts the TTL of the user's records in the meeting and of the meeting's producers. */
  touch(meeting: CellKey, userId: string): Promise<void>;
}

/** One (room, user) a holder's sockets made media in, and the room's media server then. */
export interface HeldMedia {
  readonly kind: MediaRoomKind;
  readonly key: CellKey;
  readonly userId: string;
  readonly server: string | null;
}

/**
 * The node processes that hold media for their sockets (Redis: src/adapters/redis/
 * media-holders.ts), so that what a dead one held is released by the others.
 */
export interface MediaHolders {
  /** This process's holder id: what its records are tagged with. */
  readonly self: string;
  /** This process's sockets made media for the user in the room (on `server`). */
  hold(kind: MediaRoomKind, key: CellKey, userId: string, server: string | null): Promise<void>;
  /** The user's media in the room was released here: no longer this process's to release. */
  unhold(kind: MediaRoomKind, key: CellKey, userId: string): Promise<void>;
  /** Holders that stopped beating and still hold something. */
  dead(): Promise<string[]>;
  /** Claims a dead holder's release for a while (false: another node has it). */
  claim(holder: string): Promise<boolean>;
  heldBy(holder: string): Promise<HeldMedia[]>;
  /** The holder's media was released: it leaves the directory. */
  forget(holder: string): Promise<void>;
}
