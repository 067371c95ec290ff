/**
 * The voice room's state, commands and events. Names follow the contract
 * (room-cell-state-machines.md): the Room, Presence and Mic machines of one room.
 */

import type { PresenceBook } from './presence-book.js';

export type RoomStatus = 'absent' | 'creating' | 'active' | 'closing' | 'closed';
/** The Presence machine's states; the room keeps only `present` ones (see `presence` below). */
export type PresenceState = 'present' | 'left' | 'stale_left' | 'kicked' | 'closed_left';
export type MicState = 'idle' | 'locked' | 'pending_publish' | 'publishing';
/**
 * How audience members take a seat: `free` (MicUp on any idle seat, the seed's rule) or
 * `apply` (they apply; the owner or an admin approves).
 */
export type SeatMode = 'free' | 'apply';

/** A pending application for a seat (seat mode `apply`), one per user. */
export interface SeatApplication {
  readonly user_id: string;
  /** The seat asked for; null: any. */
  readonly seat_index: number | null;
  readonly applied_at_ms: number;
  /** Server clock: it ends `expired` then (a deadline of the cell). */
  readonly expires_at_ms: number;
}

/** A pending invitation to a seat (抱麦), one per user: the owner's or an admin's. */
export interface SeatInvitation {
  readonly user_id: string;
  /** The seat offered; null: any idle one when accepted. */
  readonly seat_index: number | null;
  readonly operator_user_id: string;
  readonly invited_at_ms: number;
  /** Server clock: it ends `expired` then (a deadline of the cell). */
  readonly expires_at_ms: number;
}

/** Why an invitation ended. */
export type SeatInvitationEnd =
  'accepted' | 'declined' | 'expired' | 'left' | 'stale' | 'kicked' | 'seated' | 'room_closed';

/** Why an application ended. */
export type SeatApplicationEnd =
  | 'approved'
  | 'rejected'
  | 'cancelled'
  | 'expired'
  | 'left'
  | 'stale'
  | 'kicked'
  | 'seated'
  | 'seat_mode_changed'
  | 'room_closed';

/** A present user's presence. */
export interface Presence {
  readonly state: 'present';
  readonly joined_at_ms: number;
  readonly last_seen_at_ms: number;
}

export interface MicSeat {
  readonly seat_index: number;
  readonly state: MicState;
  readonly user_id: string | null;
  readonly mic_session_id: string | null;
  /** Room version of the MicUp that opened the session. */
  readonly mic_session_room_version: number | null;
  /**
   * When the session opened, on this server's clock. Informational: never compared with an
   * RTC event's time, which comes from the RTC provider's clock (see decide-mic.ts).
   */
  readonly mic_session_started_at_ms: number | null;
  /**
   * RTC clock: event time of the last RTC event applied to this session (its RTC anchor),
   * null until one is. Only RTC events write it; older ones are dropped.
   */
  readonly last_publish_event_time_ms: number | null;
  readonly publish_deadline_ms: number | null;
  /**
   * 禁麦 (SetSeatMuted): the seat's holder is not heard (the built-in media server pauses
   * its producer and makes no new one) and a pending seat has no publish deadline. Belongs
   * to the seat, like a lock: it survives the holder changing. Absent: not muted.
   */
  readonly muted?: boolean;
}

export interface VoiceRoomState {
  readonly status: RoomStatus;
  readonly owner_user_id: string | null;
  readonly title: string;
  readonly created_at_ms: number | null;
  readonly closed_at_ms: number | null;
  readonly admins: readonly string[];
  readonly banned: readonly string[];
  /**
   * The users who are `present`, and nobody else. A user who left (`left`), went stale
   * (`stale_left`), was kicked (`kicked`) or was there when the room closed (`closed_left`)
   * has no entry, like one who never came (`absent`), because nothing tells those states
   * apart: every decider and guard asks only "present or not" (a kick's ban lives in
   * `banned`, which outlives the presence, and a closed room refuses everything), and the
   * members list, the online count and the media reset's user list show present users only.
   * How each presence ended is recorded where it is consumed: the events UserLeft,
   * PresenceStale, UserKicked and RoomClosed, in the command log, the outbox (webhooks) and
   * the frames. Kept entries would grow the state, and every snapshot, with everyone who ever
   * came in. Snapshots written when every entry was kept load through ./snapshot.ts.
   *
   * A persistent tree (./presence-book.ts): a heartbeat copies O(log n) nodes rather than
   * every member, and each node keeps the earliest last_seen_at_ms of its subtree, so the
   * next stale deadline is the root's, without a scan.
   */
  readonly presence: PresenceBook;
  readonly seats: readonly MicSeat[];
  /**
   * RTC clock: per user, the event time of the last RTC event applied to any of their mic
   * sessions. An RTC event without a session id that is not newer belongs to an earlier
   * session. Absent in snapshots written before it existed (read as empty).
   */
  readonly last_rtc_event_time_ms?: Readonly<Record<string, number>>;
  /**
   * The media server holding the room's router (every node's audio calls for the room go
   * there). Absent or null in rooms created before servers were recorded: the edge then
   * uses its own node's server, as it always did.
   */
  readonly media_server?: string | null;
  /**
   * How many times the router moved off a dead media server (absent: none): part of each
   * move's request id, so that a room back on a server it once left can move off it again.
   */
  readonly media_moves?: number;
  /** Absent in rooms created before seat modes: `free`. */
  readonly seat_mode?: SeatMode;
  /** The room's announcement (UpdateRoom); absent: none. */
  readonly announcement?: string;
  /** Pending seat applications, oldest first; absent: none. */
  readonly seat_applications?: readonly SeatApplication[];
  /** Pending seat invitations, oldest first; absent: none. */
  readonly seat_invitations?: readonly SeatInvitation[];
  /**
   * Present members who muted their own microphone (a client matter, shown to the room);
   * absent: none. A presence's end clears it.
   */
  readonly mic_muted?: readonly string[];
  /** Public chat (公屏): the last message id given (ids are 1, 2, 3… in the room); absent: 0. */
  readonly message_count?: number;
  /**
   * Chat mutes (MuteChatUser): per user, the server time the mute ends. Kept past a leave
   * (rejoining does not lift it); ended ones are dropped at the next mute change. Absent: none.
   */
  readonly chat_mutes?: Readonly<Record<string, number>>;
}

/** Who asks: every management command names its operator. */
interface ByOperator {
  readonly operator_user_id: string;
}

/**
 * RTC callbacks: the time the RTC service saw the event (on the RTC provider's clock, not
 * this server's; possibly whole seconds), and the session when known.
 */
interface RtcEvent {
  readonly user_id: string;
  readonly event_time_ms: number;
  readonly mic_session_id?: string | undefined;
}

export type VoiceRoomCommand =
  | {
      readonly type: 'CreateRoom';
      readonly owner_user_id: string;
      readonly title: string;
      readonly seat_count: number;
      /** The media server the edge placed the room's router on; null: no media. */
      readonly media_server?: string | null | undefined;
      /** Default `free`. */
      readonly seat_mode?: SeatMode | undefined;
    }
  | ({
      readonly type: 'UpdateRoom';
      readonly title?: string | undefined;
      readonly announcement?: string | undefined;
      readonly seat_mode?: SeatMode | undefined;
    } & ByOperator)
  | {
      readonly type: 'ApplyForSeat';
      readonly user_id: string;
      readonly seat_index?: number | undefined;
    }
  | { readonly type: 'CancelSeatApplication'; readonly user_id: string }
  | ({
      readonly type: 'ApproveSeatApplication';
      readonly user_id: string;
      readonly seat_index?: number | undefined;
    } & ByOperator)
  | ({ readonly type: 'RejectSeatApplication'; readonly user_id: string } & ByOperator)
  | ({
      readonly type: 'InviteToSeat';
      readonly user_id: string;
      readonly seat_index?: number | undefined;
    } & ByOperator)
  | ({
      readonly type: 'MoveToSeat';
      readonly user_id: string;
      readonly seat_index: number;
    } & ByOperator)
  | ({ readonly type: 'SetSeatCount'; readonly seat_count: number } & ByOperator)
  | ({
      readonly type: 'SetSeatMuted';
      readonly seat_index: number;
      readonly muted: boolean;
    } & ByOperator)
  | { readonly type: 'SetMicMuted'; readonly user_id: string; readonly muted: boolean }
  | { readonly type: 'AcceptSeatInvitation'; readonly user_id: string }
  | { readonly type: 'DeclineSeatInvitation'; readonly user_id: string }
  | ({ readonly type: 'CloseRoom' } & ByOperator)
  | { readonly type: 'JoinRoom'; readonly user_id: string }
  | { readonly type: 'LeaveRoom'; readonly user_id: string }
  | { readonly type: 'RoomHeartbeat'; readonly user_id: string }
  | ({ readonly type: 'KickUser'; readonly user_id: string } & ByOperator)
  | ({ readonly type: 'UnbanUser'; readonly user_id: string } & ByOperator)
  | ({
      readonly type: 'SetRoomAdmin';
      readonly user_id: string;
      readonly is_admin: boolean;
    } & ByOperator)
  | ({
      readonly type: 'SetMicSeatLock';
      readonly seat_index: number;
      readonly locked: boolean;
    } & ByOperator)
  | { readonly type: 'MicUp'; readonly user_id: string; readonly seat_index: number }
  | {
      readonly type: 'MicDown';
      readonly user_id: string;
      readonly operator_user_id?: string | undefined;
    }
  | { readonly type: 'ChangeMicSeat'; readonly user_id: string; readonly seat_index: number }
  | {
      readonly type: 'ConfirmMicPublishing';
      readonly user_id: string;
      readonly mic_session_id: string;
    }
  | ({ readonly type: 'RtcAudioStarted' } & RtcEvent)
  | ({ readonly type: 'RtcAudioStopped' } & RtcEvent)
  | ({ readonly type: 'RtcRoomExited' } & RtcEvent)
  | {
      readonly type: 'SendGift';
      readonly sender_user_id: string;
      readonly receiver_user_ids: readonly string[];
      readonly gift_id: string;
      readonly count: number;
      /** Resolved from the app's catalog by the edge; checked again inside the commit. */
      readonly unit_price: number;
    }
  | {
      readonly type: 'SendRoomMessage';
      readonly user_id: string;
      /** The sender's nickname, read from the accounts by the edge (not the caller's say). */
      readonly user_name: string;
      readonly content: string;
    }
  | ({
      readonly type: 'MuteChatUser';
      readonly user_id: string;
      /** 0 lifts the mute. */
      readonly duration_s: number;
    } & ByOperator)
  | ({
      readonly type: 'DeleteRoomMessage';
      readonly message_id: number;
      /**
       * The message as stored, read by the edge (messages never change sender): null when
       * there is no such message (never sent, or gone with the retention).
       */
      readonly message: { readonly user_id: string; readonly deleted: boolean } | null;
    } & ByOperator)
  /** System command of the timer worker: stale presence and publish timeouts. */
  | { readonly type: 'ExpireDeadlines' }
  /**
   * The room's media server `from_server` died: its router goes on `to_server`. Sent by any
   * node that noticed, one request id per (room, dead server); a room not on `from_server`
   * (or not active) is left alone.
   */
  | { readonly type: 'MoveMediaServer'; readonly from_server: string; readonly to_server: string };

export type MicReleaseReason =
  | 'mic_down'
  | 'forced_down'
  | 'leave'
  | 'kicked'
  | 'seat_locked'
  | 'stale'
  | 'publish_timeout'
  | 'audio_stopped'
  | 'room_exited'
  | 'room_closed';

/**
 * The mark of a join or leave in a room's crowd: a plain member (not the owner, an admin or
 * a seat holder) while more than `announcedAudience` members are present. Such a change is
 * counted, not announced one by one: no `voice.member.*` frame, a `voice.audience` count
 * frame at most once a second instead. Both fields or neither.
 */
export interface InCrowd {
  readonly in_crowd?: true;
  /** The present members after this event. */
  readonly online_count?: number;
}

export type VoiceRoomEvent =
  | {
      readonly type: 'RoomCreated';
      readonly owner_user_id: string;
      readonly title: string;
      readonly seat_count: number;
      /** Absent in events logged before servers were recorded. */
      readonly media_server?: string | null;
      /** Absent in events logged before seat modes (and for `free`). */
      readonly seat_mode?: SeatMode;
      readonly at_ms: number;
    }
  /** What UpdateRoom changed: only the fields that changed. */
  | {
      readonly type: 'RoomUpdated';
      readonly operator_user_id: string;
      readonly title?: string;
      readonly announcement?: string;
      readonly seat_mode?: SeatMode;
    }
  | {
      readonly type: 'SeatApplied';
      readonly user_id: string;
      readonly seat_index: number | null;
      readonly at_ms: number;
      readonly expires_at_ms: number;
    }
  | {
      readonly type: 'SeatInvited';
      readonly user_id: string;
      readonly seat_index: number | null;
      readonly operator_user_id: string;
      readonly at_ms: number;
      readonly expires_at_ms: number;
    }
  | {
      readonly type: 'SeatInvitationEnded';
      readonly user_id: string;
      readonly reason: SeatInvitationEnd;
    }
  | {
      readonly type: 'SeatApplicationEnded';
      readonly user_id: string;
      readonly reason: SeatApplicationEnd;
      /** Who approved or rejected it. */
      readonly operator_user_id?: string;
    }
  | { readonly type: 'RoomActivated'; readonly at_ms: number }
  /**
   * The room's router moved to `to_server` (its server died); `user_ids`, the present
   * members then, re-create their transports (`voice.media.reset`).
   */
  | {
      readonly type: 'MediaServerMoved';
      readonly from_server: string;
      readonly to_server: string;
      readonly user_ids: readonly string[];
      readonly at_ms: number;
    }
  | { readonly type: 'RoomClosed'; readonly operator_user_id: string; readonly at_ms: number }
  | ({ readonly type: 'UserJoined'; readonly user_id: string; readonly at_ms: number } & InCrowd)
  | { readonly type: 'PresenceRefreshed'; readonly user_id: string; readonly at_ms: number }
  | ({ readonly type: 'UserLeft'; readonly user_id: string; readonly at_ms: number } & InCrowd)
  | ({ readonly type: 'PresenceStale'; readonly user_id: string; readonly at_ms: number } & InCrowd)
  | { readonly type: 'UserKicked'; readonly user_id: string; readonly operator_user_id: string }
  | { readonly type: 'UserUnbanned'; readonly user_id: string; readonly operator_user_id: string }
  | { readonly type: 'RoomAdminSet'; readonly user_id: string; readonly is_admin: boolean }
  | { readonly type: 'MicSeatLockSet'; readonly seat_index: number; readonly locked: boolean }
  | {
      readonly type: 'MicTakenUp';
      readonly user_id: string;
      readonly seat_index: number;
      readonly mic_session_id: string;
      readonly mic_session_room_version: number;
      readonly publish_deadline_ms: number;
      readonly at_ms: number;
    }
  | {
      readonly type: 'MicSeatChanged';
      readonly user_id: string;
      readonly from_seat_index: number;
      readonly seat_index: number;
      readonly mic_session_id: string;
      readonly publish_deadline_ms: number;
      /** The owner or admin who moved the user (MoveToSeat); absent: the user moved. */
      readonly operator_user_id?: string;
    }
  | {
      readonly type: 'SeatCountSet';
      readonly seat_count: number;
      readonly operator_user_id: string;
    }
  | { readonly type: 'MicMuteSet'; readonly user_id: string; readonly muted: boolean }
  | {
      readonly type: 'SeatMuteSet';
      readonly seat_index: number;
      readonly muted: boolean;
      readonly operator_user_id: string;
      /** Unmuting a pending seat: its publish deadline starts again. */
      readonly publish_deadline_ms?: number;
    }
  | ({
      readonly type: 'MicPublishingConfirmed';
      readonly user_id: string;
      readonly seat_index: number;
      readonly mic_session_id: string;
    } & (
      | {
          /**
           * RTC audio_started. Logs written before MicRtcAnchored existed also have one for a
           * seat the client had confirmed first (replay reads it as that anchor).
           */
          readonly source: 'rtc';
          /** RTC clock: the RTC event's time. */
          readonly event_time_ms: number;
        }
      | {
          readonly source: 'client';
          /** Server clock. Logged events from before it existed lack it; replay never reads it. */
          readonly at_ms: number;
          /** Older logs only: server time under an RTC name; never read. @deprecated */
          readonly event_time_ms?: number;
        }
    ))
  /**
   * RTC audio_started of a session the client already confirmed: it gives the session its
   * RTC anchor (`last_publish_event_time_ms`) and is no publishing transition. Command log
   * only: neither sent to webhooks nor framed (the seat went live once, at the confirm).
   */
  | {
      readonly type: 'MicRtcAnchored';
      readonly user_id: string;
      readonly seat_index: number;
      readonly mic_session_id: string;
      /** RTC clock: the RTC event's time. */
      readonly event_time_ms: number;
    }
  | {
      readonly type: 'MicReleased';
      readonly user_id: string;
      readonly seat_index: number;
      readonly mic_session_id: string;
      readonly reason: MicReleaseReason;
      /** RTC clock: the RTC event's time, for releases by audio_stopped or room_exited. */
      readonly event_time_ms?: number;
    }
  | {
      readonly type: 'RoomMessageSent';
      /** 1, 2, 3… within the room (the history's `before_id` cursor). */
      readonly message_id: number;
      readonly user_id: string;
      readonly user_name: string;
      readonly content: string;
      readonly at_ms: number;
    }
  | {
      readonly type: 'ChatMuteSet';
      readonly user_id: string;
      readonly operator_user_id: string;
      /** Server time the mute ends; null: lifted. */
      readonly muted_until_ms: number | null;
      readonly at_ms: number;
    }
  | {
      readonly type: 'RoomMessageDeleted';
      readonly message_id: number;
      readonly operator_user_id: string;
    }
  | {
      readonly type: 'GiftSent';
      readonly sender_user_id: string;
      readonly receiver_user_ids: readonly string[];
      readonly gift_id: string;
      readonly count: number;
      readonly unit_price: number;
      /** What the sender pays: unit_price × count × receivers. */
      readonly total_price: number;
    };

export interface VoiceRoomSettings {
  /** A present user without heartbeat for this long becomes `stale_left`. */
  readonly presenceTimeoutMs: number;
  /** A `pending_publish` seat not confirmed by then goes back to `idle`. */
  readonly publishTimeoutMs: number;
  readonly maxSeats: number;
  /**
   * Past this many present members, a plain member's join or leave is counted, not
   * announced (see {@link InCrowd}); 0 announces every one. Default 200.
   */
  readonly announcedAudience?: number;
  /** How long a seat application waits for a decision (default 60 s). */
  readonly seatApplicationTtlMs?: number;
}
