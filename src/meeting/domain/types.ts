/**
 * The meeting's state, commands and events (one cell = one meeting). Field names, state
 * values and reasons follow meeting-api.md (`host_id`, `max_members`, `status` 0/1/2,
 * `left_reason`, `ended_reason`, `auto_reason`). User ids are the decimal strings of the
 * JWT `sub`; the edge renders them as the seed's int64 numbers, and times (ms since epoch
 * here) as the seed's `YYYY-MM-DD HH:mm:ss`.
 */

/** The seed's `status`: 0 未开始, 1 进行中, 2 已结束. A created meeting starts at 1. */
export type MeetingStatus = 0 | 1 | 2;

/** Why a meeting ended (`meeting.room.ended {reason}`). */
export type EndedReason = 'host_ended' | 'empty_ttl' | 'system_error';

/**
 * Why a participant left: `leave` (REST /leave), `kicked`, `host_end`, and `system_error`
 * for the members still inside a meeting the stale cleanup ends.
 */
export type LeftReason = 'leave' | 'kicked' | 'host_end' | 'system_error';

/**
 * `auto_reason` of an automatic `meeting.host.changed` (a transfer by the host has none).
 * `empty_room_revived` is this project's addition: the seed keeps `host_id` on the last
 * leaver of an emptied meeting, but a meeting in progress always has its host among the
 * active participants, so whoever revives an emptied meeting (other than the old host)
 * becomes its host.
 */
export type AutoReason = 'host_left_with_members' | 'host_grace_expired' | 'empty_room_revived';

/**
 * One node's report that a user has a live WebSocket on the meeting's channel there: a
 * lease that lives until `until_ms` unless the node refreshes it. The host's grace starts
 * when the host's last entry goes (its node said so, or the lease ran out).
 */
export interface PresenceEntry {
  readonly user_id: string;
  /** The reporting node's `ROOMS_NODE_ID`. */
  readonly node_id: string;
  readonly until_ms: number;
}

/** One `meeting_participants` row: a user has at most one per meeting, reused on re-join. */
export interface Participant {
  /** The row id the edge allocated for the first join; kept on every re-join. */
  readonly participant_id: string;
  readonly user_id: string;
  readonly joined_at_ms: number;
  /** null while the participant is active (the seed's `left_at IS NULL`). */
  readonly left_at_ms: number | null;
  /** Seconds between joined_at and left_at; 0 while active and after a re-join. */
  readonly duration_s: number;
  readonly left_reason: LeftReason | null;
  /**
   * Per-meeting counter of (re)joins: breaks ties between equal `joined_at_ms`, so "the
   * earliest-joined active member" is always exactly one participant.
   */
  readonly join_seq: number;
  readonly audio_enabled: boolean;
  readonly video_enabled: boolean;
  readonly hand_raised: boolean;
}

/** Why someone stopped waiting without being admitted (`meeting.waiting.left {reason}`). */
export type WaitingLeftReason = 'denied' | 'expired' | 'left' | 'meeting_ended';

/** A join waiting for the host's decision (the waiting room). */
export interface WaitingEntry {
  readonly user_id: string;
  /** The row id the edge allocated for the join; the participant's on admission. */
  readonly participant_id: string;
  readonly since_ms: number;
  /** Not decided by then: the entry expires (`expired`). */
  readonly deadline_ms: number;
}

/** One recording of the meeting (its files are on `media_server`). */
export interface RecordingEntry {
  /** `<room code digits>-<n>`: 1, 2, 3… within the meeting. */
  readonly recording_id: string;
  readonly media_server: string | null;
  readonly started_at_ms: number;
  readonly stopped_at_ms: number | null;
}

export interface MeetingState {
  /** null: the meeting does not exist (the cell was never created). */
  readonly status: MeetingStatus | null;
  /**
   * The seed's numeric `id` (the room object's `id`, the participant's and chat message's
   * `room_id`); null before creation and in states saved before ids were kept.
   */
  readonly meeting_id: number | null;
  /**
   * The media server holding the meeting's router (every node's media calls for the
   * meeting go there); null: created without media, or before servers were recorded.
   */
  readonly media_server: string | null;
  /** The 9-digit `XXX-XXX-XXX` code the edge generated. */
  readonly room_code: string;
  readonly title: string;
  /** The host's user id; on an emptied meeting, the last one who left. */
  readonly host_id: string | null;
  readonly has_password: boolean;
  /**
   * bcrypt hash of the join password, computed by the edge; the edge verifies against it.
   * Secret: never in a view, a reply, the outbox or a log line.
   */
  readonly password_hash: string | null;
  readonly max_members: number;
  readonly created_at_ms: number | null;
  readonly started_at_ms: number | null;
  readonly ended_at_ms: number | null;
  readonly ended_reason: EndedReason | null;
  /** Every participant row, in the order of their first join. */
  readonly participants: readonly Participant[];
  /** How many (re)joins happened; the next join gets `join_seq = join_count + 1`. */
  readonly join_count: number;
  /** Chat message ids are 1, 2, 3… within the meeting. */
  readonly chat_count: number;
  /** Set while the meeting is in progress with nobody in it: when it ends (`empty_ttl`). */
  readonly empty_deadline_ms: number | null;
  /** Set while the host has no live WebSocket: when the host moves (`host_grace_expired`). */
  readonly host_grace: { readonly user_id: string; readonly deadline_ms: number } | null;
  /** When the last command changed something (timers do not count); stale after staleMs. */
  readonly last_activity_ms: number | null;
  /**
   * Per active user, the nodes that reported a live socket, each until its lease runs out
   * (one entry per (user, node)). Absent in states saved before presence was kept.
   */
  readonly presence?: readonly PresenceEntry[];
  /**
   * How many times the router moved off a dead media server (absent: none): part of each
   * move's request id, so that a meeting back on a server it once left can move off it again.
   */
  readonly media_moves?: number;
  /** The host locked the meeting: nobody new joins (absent: unlocked). */
  readonly locked?: boolean;
  /** The host muted everyone and members may not unmute themselves (absent: they may). */
  readonly self_unmute_blocked?: boolean;
  /**
   * Who shares a screen now and since when (one at a time; absent or null: nobody). A
   * share the sharer's node forgot (its socket dropped) may be taken over once it is older
   * than the grace the edge's stale check needs (decide-screen.ts).
   */
  readonly screen_share?: { readonly user_id: string; readonly since_ms: number } | null;
  /**
   * The meeting's recordings, oldest first (absent: none); the last is running while its
   * `stopped_at_ms` is null. Each is made on the media server the meeting had then.
   */
  readonly recordings?: readonly RecordingEntry[];
  /** New joins wait for the host to admit them (absent: they come straight in). */
  readonly waiting_room?: boolean;
  /** The joins waiting for the host, earliest first (absent: none). */
  readonly waiting?: readonly WaitingEntry[];
}

/**
 * How the edge judged the join password, in the seed's order (lock before bcrypt): the
 * lock counter (5 wrong per (user, code) → locked 10 minutes) lives in the edge's KeyValue
 * store, bcrypt runs at the edge. `not_required` for a meeting without a password.
 */
export type PasswordVerdict = 'not_required' | 'missing' | 'locked' | 'wrong' | 'ok';

/** The state fields of `meeting.member.state.changed`; at least one is given. */
export interface MemberMediaState {
  readonly audio_enabled?: boolean | undefined;
  readonly video_enabled?: boolean | undefined;
  readonly hand_raised?: boolean | undefined;
}

export type MeetingCommand =
  | {
      readonly type: 'CreateMeeting';
      /** The seed's numeric `id` of the meeting, allocated by the edge with the room code. */
      readonly meeting_id: number;
      readonly host_user_id: string;
      /** Row id for the host's participant row. */
      readonly host_participant_id: string;
      readonly room_code: string;
      readonly title: string;
      /** bcrypt hash of the password, or null for a meeting without one. */
      readonly password_hash: string | null;
      /** 2–8; larger values are truncated to settings.maxMembersCap; default the cap. */
      readonly max_members?: number | undefined;
      /** The edge's single-meeting index says the host is active in another meeting. */
      readonly in_other_meeting: boolean;
      /** The media server the edge placed the meeting's router on; null: no media. */
      readonly media_server?: string | null | undefined;
      /** New joins wait for the host to admit them. */
      readonly waiting_room?: boolean | undefined;
    }
  | {
      readonly type: 'JoinMeeting';
      readonly user_id: string;
      /** Row id for a first join; ignored when the user already has a row (re-join). */
      readonly participant_id: string;
      /** Active in a meeting other than this one, per the edge's index. */
      readonly in_other_meeting: boolean;
      readonly password: PasswordVerdict;
    }
  | { readonly type: 'LeaveMeeting'; readonly user_id: string }
  | { readonly type: 'EndMeeting'; readonly operator_user_id: string }
  | {
      readonly type: 'TransferHost';
      readonly operator_user_id: string;
      readonly target_user_id: string;
    }
  | {
      readonly type: 'KickMember';
      readonly operator_user_id: string;
      readonly target_user_id: string;
    }
  | ({
      readonly type: 'ChangeMemberState';
      /** The caller (the broadcast's `actor_id`). */
      readonly user_id: string;
      /** Omitted or the caller: self; anyone else needs the host. */
      readonly target_user_id?: string | undefined;
    } & MemberMediaState)
  | { readonly type: 'SendChat'; readonly user_id: string; readonly content: string }
  /** The host locks the meeting (no new joins) or unlocks it. */
  | { readonly type: 'LockMeeting'; readonly operator_user_id: string; readonly locked: boolean }
  /**
   * The host mutes every other active member; with `allow_unmute: false` they may not
   * unmute themselves until the host allows it again (AllowSelfUnmute).
   */
  | { readonly type: 'MuteAll'; readonly operator_user_id: string; readonly allow_unmute: boolean }
  | {
      readonly type: 'AllowSelfUnmute';
      readonly operator_user_id: string;
      readonly allowed: boolean;
    }
  /**
   * The member starts sharing a screen (its screen producer is about to be made). Another
   * member's share is taken over by the host, or by anyone when the edge found no live
   * screen producer of that sharer (`stale_sharer_id`) and the share is past its grace.
   */
  | {
      readonly type: 'StartScreenShare';
      readonly user_id: string;
      readonly stale_sharer_id: string | null;
    }
  /** The member stopped sharing (its screen producer closed); not the sharer: nothing. */
  | { readonly type: 'StopScreenShare'; readonly user_id: string }
  /** The host starts recording the meeting (nothing if it is being recorded). */
  | { readonly type: 'StartRecording'; readonly operator_user_id: string }
  /** The host stops the running recording (nothing if none runs). */
  | { readonly type: 'StopRecording'; readonly operator_user_id: string }
  /** The host turns the waiting room on or off (the joins waiting stay for the host). */
  | {
      readonly type: 'SetWaitingRoom';
      readonly operator_user_id: string;
      readonly enabled: boolean;
    }
  /**
   * The host admits one waiting user (`user_id`) or every one (null), each with the seed's
   * join rules: capacity, and the single-meeting rule (the edge's index names who is active
   * in another meeting now). Admitting all stops at capacity; the rest keep waiting.
   */
  | {
      readonly type: 'AdmitWaiting';
      readonly operator_user_id: string;
      readonly user_id: string | null;
      readonly in_other_meeting_user_ids: readonly string[];
    }
  /** The host turns away one waiting user (`user_id`) or every one (null). */
  | {
      readonly type: 'DenyWaiting';
      readonly operator_user_id: string;
      readonly user_id: string | null;
    }
  /**
   * A live WebSocket of the user on node `node_id` is on the meeting's channel: sent on
   * `meeting.room.join` and, while it stays, well within every presence TTL (it refreshes
   * the node's entry and keeps the meeting from going stale). The host's cancels a pending
   * host grace.
   */
  | { readonly type: 'MarkSocketLive'; readonly user_id: string; readonly node_id: string }
  /**
   * The user's last WebSocket to the meeting on node `node_id` dropped: that node's entry
   * goes; the host's grace starts when the host has no entry left on any node.
   */
  | { readonly type: 'MarkSocketsGone'; readonly user_id: string; readonly node_id: string }
  /**
   * System command of the timer worker: every due deadline (empty TTL, presence leases, host
   * grace, stale).
   */
  | { readonly type: 'ExpireMeetingDeadlines' }
  /**
   * The meeting's media server `from_server` stopped (its directory record expired): its
   * router goes on `to_server`. Sent by any node that noticed, with one request id per
   * (meeting, dead server); a meeting no longer on `from_server` (or ended) is left alone.
   */
  | { readonly type: 'MoveMediaServer'; readonly from_server: string; readonly to_server: string };

export type MeetingEvent =
  | {
      readonly type: 'MeetingCreated';
      readonly meeting_id: number;
      readonly room_code: string;
      readonly title: string;
      readonly host_id: string;
      readonly has_password: boolean;
      readonly password_hash: string | null;
      readonly max_members: number;
      readonly media_server: string | null;
      /** Present (true) when new joins wait for the host. */
      readonly waiting_room?: boolean | undefined;
      readonly at_ms: number;
    }
  | {
      readonly type: 'RecordingStarted';
      readonly recording_id: string;
      readonly media_server: string | null;
      readonly actor_id: string;
      readonly at_ms: number;
    }
  /** `stopped` by the host, or `meeting_ended` with its meeting. */
  | {
      readonly type: 'RecordingStopped';
      readonly recording_id: string;
      readonly media_server: string | null;
      readonly reason: 'stopped' | 'meeting_ended';
      readonly actor_id: string | null;
      readonly at_ms: number;
    }
  | { readonly type: 'ScreenShareStarted'; readonly user_id: string; readonly at_ms: number }
  /** `actor_id`: the sharer itself, or whoever took the share over (its producers close). */
  | {
      readonly type: 'ScreenShareStopped';
      readonly user_id: string;
      readonly actor_id: string;
      readonly at_ms: number;
    }
  | {
      readonly type: 'WaitingRoomSet';
      readonly enabled: boolean;
      readonly actor_id: string;
      readonly at_ms: number;
    }
  /** A join waits for the host (`host_id` then, who is told). */
  | {
      readonly type: 'WaitingJoined';
      readonly user_id: string;
      readonly participant_id: string;
      readonly host_id: string | null;
      readonly deadline_ms: number;
      readonly at_ms: number;
    }
  /** The host admitted the waiting user: a MemberJoined follows in the same decision. */
  | {
      readonly type: 'WaitingAdmitted';
      readonly user_id: string;
      readonly actor_id: string;
      readonly at_ms: number;
    }
  | {
      readonly type: 'WaitingLeft';
      readonly user_id: string;
      readonly reason: WaitingLeftReason;
      readonly host_id: string | null;
      readonly at_ms: number;
    }
  /** An emptied meeting got a member back within its TTL: the countdown is cancelled. */
  | { readonly type: 'MeetingRevived'; readonly at_ms: number }
  | {
      readonly type: 'MemberJoined';
      /** The meeting's numeric id (null for a meeting created before ids were kept). */
      readonly meeting_id: number | null;
      readonly user_id: string;
      readonly participant_id: string;
      /** The role the member has once the join's events are applied (1 主持人, 0 参会者). */
      readonly role: 0 | 1;
      /** true: the user's existing row is reused (left_at=null, joined_at=now, duration=0). */
      readonly rejoined: boolean;
      readonly join_seq: number;
      readonly at_ms: number;
    }
  | {
      readonly type: 'MemberLeft';
      readonly user_id: string;
      readonly participant_id: string;
      readonly reason: LeftReason;
      readonly duration_s: number;
      /** The host, for `kicked` and `host_end`. */
      readonly operator_user_id?: string | undefined;
      /** The meeting's media server, where the member's resources are released. */
      readonly media_server?: string | undefined;
      readonly at_ms: number;
    }
  /** Nobody is left: the meeting ends at deadline_ms unless someone joins. */
  | { readonly type: 'EmptyTtlStarted'; readonly deadline_ms: number; readonly at_ms: number }
  | {
      readonly type: 'HostChanged';
      readonly old_host_id: string;
      readonly new_host_id: string;
      /** Absent for a transfer by the host. */
      readonly auto_reason?: AutoReason | undefined;
      readonly at_ms: number;
    }
  | {
      readonly type: 'HostGraceStarted';
      readonly user_id: string;
      readonly deadline_ms: number;
      /**
       * `presence_expired`: the host's last presence lease ran out (the timer's doing, so no
       * activity); absent: the host's last node said its sockets were gone.
       */
      readonly cause?: 'presence_expired' | undefined;
      readonly at_ms: number;
    }
  | { readonly type: 'HostGraceCancelled'; readonly user_id: string; readonly at_ms: number }
  /** The grace ran out; a HostChanged follows when another active member exists. */
  | { readonly type: 'HostGraceExpired'; readonly user_id: string; readonly at_ms: number }
  | {
      readonly type: 'MeetingEnded';
      readonly reason: EndedReason;
      /** The host, for `host_ended`. */
      readonly operator_user_id?: string | undefined;
      /** The meeting's media server, where its router is closed. */
      readonly media_server?: string | undefined;
      readonly at_ms: number;
    }
  | ({
      readonly type: 'MemberStateChanged';
      readonly user_id: string;
      readonly actor_id: string;
      readonly at_ms: number;
    } & MemberMediaState)
  | {
      readonly type: 'MeetingLocked';
      readonly locked: boolean;
      readonly actor_id: string;
      readonly at_ms: number;
    }
  | {
      readonly type: 'SelfUnmuteSet';
      readonly allowed: boolean;
      readonly actor_id: string;
      readonly at_ms: number;
    }
  | {
      readonly type: 'ChatSent';
      readonly meeting_id: number | null;
      /** 1, 2, 3… within the meeting (the seed's message `id`; cursor `before_id`). */
      readonly message_id: number;
      readonly user_id: string;
      readonly content: string;
      readonly at_ms: number;
    }
  /**
   * A live socket notice. `node_id` and `until_ms` (absent in events logged before presence
   * was kept) add or refresh that node's presence entry.
   */
  | {
      readonly type: 'SocketLive';
      readonly user_id: string;
      readonly node_id?: string | undefined;
      readonly until_ms?: number | undefined;
      readonly at_ms: number;
    }
  /**
   * The meeting's router moved to `to_server` (its server died): every member's transports,
   * producers and consumers are gone with it; `user_ids`, the active members then, re-create
   * theirs (`meeting.media.reset`).
   */
  | {
      readonly type: 'MediaServerMoved';
      readonly from_server: string;
      readonly to_server: string;
      readonly user_ids: readonly string[];
      readonly at_ms: number;
    }
  /** The node said the user's last socket there is gone: its entry is removed. */
  | {
      readonly type: 'SocketsGone';
      readonly user_id: string;
      readonly node_id: string;
      readonly at_ms: number;
    }
  /** The node's lease for the user ran out (no refresh came: the node died or lost touch). */
  | {
      readonly type: 'PresenceExpired';
      readonly user_id: string;
      readonly node_id: string;
      readonly at_ms: number;
    };

export interface MeetingSettings {
  /** An emptied meeting ends (`empty_ttl`) after this long without a join (seed: 300 s). */
  readonly emptyTtlMs: number;
  /** The host without a live WebSocket for this long loses the host role. */
  readonly hostGraceMs: number;
  /**
   * How long a node's report of a user's live socket holds without a refresh (the
   * signalling refreshes every third of it); then the node counts as gone for that user.
   */
  readonly presenceTtlMs: number;
  /** A meeting with no activity for this long ends (`system_error`; seed: 4 h). */
  readonly staleMs: number;
  /** A join left waiting this long without the host's decision expires. */
  readonly waitingTtlMs: number;
  /** The MVP's hard capacity limit (seed: 8); larger `max_members` are truncated to it. */
  readonly maxMembersCap: number;
}
