/**
 * What the meeting's WebSocket signalling needs from the rest of the node: the meeting's
 * membership (the meeting cell), the media resources each user holds (Redis in cluster
 * mode, in memory in embedded mode), the media servers (`MediaServers`, declared in
 * src/meeting/media-servers.ts) and the room broadcaster (`RealtimePublisher.toRoom`).
 * A meeting is addressed by its cell key: `{ appCode, roomId: room_code }`.
 */
import type { CellKey } from '../../cell/lease.js';
import type { MemberMediaState } from '../../domain/meeting/types.js';
import type { MediaKind, TransportDirection } from '../../meeting/media-orchestrator.js';

/** An active participant, as the meeting sees it now. */
export interface MeetingMember {
  readonly isHost: boolean;
  /** The media server the meeting's state records (null: the meeting has no media). */
  readonly mediaServer: string | null;
}

/** `meeting.member.state.changed`'s change; `target_user_id` omitted = the caller. */
export type MemberStateChange = MemberMediaState & { readonly target_user_id?: string | undefined };

/**
 * The meeting's membership, over the meeting cell. Every method throws the meeting's
 * refusals as AppErrors (`会议不存在` MEETING_NOT_FOUND, `你当前未在会议中` NOT_IN_MEETING, …)
 * and `unavailable` errors when the cell cannot be reached.
 */
export interface MeetingMembership {
  /**
   * The caller is an active participant (`left_at IS NULL`) of the meeting in progress, or
   * this throws: a user who never joined is treated like one who left (NOT_IN_MEETING).
   */
  member(appCode: string, roomCode: string, userId: string): Promise<MeetingMember>;
  /**
   * The cell's `MarkSocketLive`: a live WebSocket of the user on node `nodeId` follows the
   * meeting (that node's presence lease for the user starts or is refreshed).
   */
  socketLive(appCode: string, roomCode: string, userId: string, nodeId: string): Promise<void>;
  /**
   * The cell's `MarkSocketsGone`: the user's last WebSocket on node `nodeId` left (that
   * node's lease ends; the host's grace starts when the host has none left on any node).
   */
  socketsGone(appCode: string, roomCode: string, userId: string, nodeId: string): Promise<void>;
  /**
   * The cell's `ChangeMemberState` (another member's state needs the host: HOST_ONLY_WS
   * `仅主持人可执行此操作`; at least one field). Its commit broadcasts
   * `meeting.member.state.changed` through the meeting's frame mapping.
   */
  changeState(
    appCode: string,
    roomCode: string,
    actorId: string,
    change: MemberStateChange,
  ): Promise<void>;
}

export interface TransportRecord {
  readonly id: string;
  readonly direction: TransportDirection;
}
export interface ProducerRecord {
  readonly id: string;
  readonly kind: MediaKind;
}
export interface ConsumerRecord {
  readonly id: string;
  readonly producerId: string;
}

/** What one user holds in one meeting. */
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

/** A producer of the meeting that has not been closed through the signalling. */
export interface LiveProducer {
  readonly userId: string;
  readonly producerId: string;
  readonly kind: MediaKind;
}

/**
 * The media resources each user holds in each meeting (the seed's
 * `resources:{room}:{user}` set): for ownership checks, for the clean-up on
 * `meeting.room.leave` and on disconnect, and for late joiners (the meeting's live
 * producers). Every record lives `ttlMs` (1 h by default) after the last write or
 * {@link MeetingMediaState.touch} of its user in that meeting, so nothing outlives a
 * forgotten meeting. Each method is atomic.
 */
export interface MeetingMediaState {
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
