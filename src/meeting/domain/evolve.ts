/** Pure and total: the only place the meeting's state changes. */
import type {
  MeetingEvent,
  MeetingState,
  Participant,
  PresenceEntry,
  WaitingEntry,
} from './types.js';

export function initialMeeting(): MeetingState {
  return {
    status: null,
    meeting_id: null,
    media_server: null,
    room_code: '',
    title: '',
    host_id: null,
    has_password: false,
    password_hash: null,
    max_members: 0,
    created_at_ms: null,
    started_at_ms: null,
    ended_at_ms: null,
    ended_reason: null,
    participants: [],
    join_count: 0,
    chat_count: 0,
    empty_deadline_ms: null,
    host_grace: null,
    last_activity_ms: null,
    presence: [],
  };
}

export function evolveMeeting(state: MeetingState, event: MeetingEvent): MeetingState {
  // The stale cleanup counts from the last activity: every event but a timer's own.
  const touched = isActivity(event) ? { ...state, last_activity_ms: event.at_ms } : state;
  switch (event.type) {
    case 'MeetingCreated':
      return {
        ...touched,
        status: 1,
        meeting_id: event.meeting_id,
        media_server: event.media_server ?? null,
        room_code: event.room_code,
        title: event.title,
        host_id: event.host_id,
        has_password: event.has_password,
        password_hash: event.password_hash,
        max_members: event.max_members,
        created_at_ms: event.at_ms,
        started_at_ms: event.at_ms,
        ...(event.waiting_room ? { waiting_room: true } : {}),
      };
    case 'MeetingRevived':
      return { ...touched, empty_deadline_ms: null };
    case 'MemberJoined': {
      const fresh: Participant = {
        participant_id: event.participant_id,
        user_id: event.user_id,
        joined_at_ms: event.at_ms,
        left_at_ms: null,
        duration_s: 0,
        left_reason: null,
        join_seq: event.join_seq,
        audio_enabled: false,
        video_enabled: false,
        hand_raised: false,
      };
      const known = participantOf(state, event.user_id) !== undefined;
      return {
        ...touched,
        join_count: Math.max(state.join_count, event.join_seq),
        // A re-join reuses the row (and its id): only the join fields are reset.
        participants: known
          ? mapParticipant(state, event.user_id, (p) => ({
              ...fresh,
              participant_id: p.participant_id,
            }))
          : [...state.participants, fresh],
      };
    }
    case 'MemberLeft':
      return {
        ...touched,
        participants: mapParticipant(state, event.user_id, (p) => ({
          ...p,
          left_at_ms: event.at_ms,
          duration_s: event.duration_s,
          left_reason: event.reason,
        })),
        // The grace is about the host's sockets; a host who left has none to wait for.
        host_grace: state.host_grace?.user_id === event.user_id ? null : state.host_grace,
        // Only active members have presence: a re-join starts from its next live notice.
        presence: presenceOf(state).filter((e) => e.user_id !== event.user_id),
        // A member who left shares nothing (its producers closed with its media).
        ...(state.screen_share?.user_id === event.user_id ? { screen_share: null } : {}),
      };
    case 'EmptyTtlStarted':
      return { ...touched, empty_deadline_ms: event.deadline_ms };
    case 'HostChanged':
      return { ...touched, host_id: event.new_host_id, host_grace: null };
    case 'HostGraceStarted':
      return {
        ...touched,
        host_grace: { user_id: event.user_id, deadline_ms: event.deadline_ms },
      };
    case 'HostGraceCancelled':
    case 'HostGraceExpired':
      return { ...touched, host_grace: null };
    case 'MeetingEnded':
      return {
        ...touched,
        status: 2,
        ended_at_ms: event.at_ms,
        ended_reason: event.reason,
        empty_deadline_ms: null,
        host_grace: null,
        presence: [],
      };
    case 'MemberStateChanged':
      return {
        ...touched,
        participants: mapParticipant(state, event.user_id, (p) => ({
          ...p,
          audio_enabled: event.audio_enabled ?? p.audio_enabled,
          video_enabled: event.video_enabled ?? p.video_enabled,
          hand_raised: event.hand_raised ?? p.hand_raised,
        })),
      };
    case 'ChatSent':
      return { ...touched, chat_count: Math.max(state.chat_count, event.message_id) };
    case 'MeetingLocked':
      return { ...touched, locked: event.locked };
    case 'SelfUnmuteSet':
      return { ...touched, self_unmute_blocked: !event.allowed };
    case 'RecordingStarted':
      return {
        ...touched,
        recordings: [
          ...(state.recordings ?? []),
          {
            recording_id: event.recording_id,
            media_server: event.media_server,
            started_at_ms: event.at_ms,
            stopped_at_ms: null,
          },
        ],
      };
    case 'RecordingStopped':
      return {
        ...touched,
        recordings: (state.recordings ?? []).map((r) =>
          r.recording_id === event.recording_id ? { ...r, stopped_at_ms: event.at_ms } : r,
        ),
      };
    case 'ScreenShareStarted':
      return { ...touched, screen_share: { user_id: event.user_id, since_ms: event.at_ms } };
    case 'ScreenShareStopped':
      return state.screen_share?.user_id === event.user_id
        ? { ...touched, screen_share: null }
        : touched;
    case 'WaitingRoomSet':
      return { ...touched, waiting_room: event.enabled };
    case 'WaitingJoined':
      return {
        ...touched,
        waiting: [
          ...waitingOf(state),
          {
            user_id: event.user_id,
            participant_id: event.participant_id,
            since_ms: event.at_ms,
            deadline_ms: event.deadline_ms,
          },
        ],
      };
    case 'WaitingAdmitted':
    case 'WaitingLeft':
      return { ...touched, waiting: waitingOf(state).filter((w) => w.user_id !== event.user_id) };
    case 'SocketLive':
      // An event logged before presence was kept only counts as activity.
      if (event.node_id === undefined || event.until_ms === undefined) return touched;
      return {
        ...touched,
        presence: withEntry(state, {
          user_id: event.user_id,
          node_id: event.node_id,
          until_ms: event.until_ms,
        }),
      };
    case 'MediaServerMoved':
      return {
        ...touched,
        media_server: event.to_server,
        media_moves: (state.media_moves ?? 0) + 1,
      };
    case 'SocketsGone':
    case 'PresenceExpired':
      return { ...touched, presence: withoutEntry(state, event.user_id, event.node_id) };
    default:
      return assertNever(event);
  }
}

/**
 * Whether an event is activity for the stale cleanup: everything a command causes, not
 * what the host grace timer does on its own (a timer that fired must not keep the meeting
 * alive; the endings need no activity).
 */
function isActivity(event: MeetingEvent): boolean {
  switch (event.type) {
    // A media server's death is nobody's doing: it must not keep a meeting from going stale.
    case 'MediaServerMoved':
    case 'HostGraceExpired':
    case 'PresenceExpired':
      return false;
    case 'HostGraceStarted':
      return event.cause !== 'presence_expired';
    case 'WaitingLeft':
      return event.reason !== 'expired';
    case 'HostChanged':
      return event.auto_reason !== 'host_grace_expired';
    default:
      return true;
  }
}

/** The presence entries of the meeting (none in a state saved before they were kept). */
export function presenceOf(state: MeetingState): readonly PresenceEntry[] {
  return state.presence ?? [];
}

/** The nodes that hold a presence entry of the user. */
export function presenceOfUser(state: MeetingState, userId: string): PresenceEntry[] {
  return presenceOf(state).filter((e) => e.user_id === userId);
}

/** Adds the (user, node) entry, or replaces it in place: one entry per (user, node). */
function withEntry(state: MeetingState, entry: PresenceEntry): readonly PresenceEntry[] {
  const all = presenceOf(state);
  const at = all.findIndex((e) => e.user_id === entry.user_id && e.node_id === entry.node_id);
  return at < 0 ? [...all, entry] : all.map((e, i) => (i === at ? entry : e));
}

function withoutEntry(state: MeetingState, userId: string, nodeId: string) {
  return presenceOf(state).filter((e) => e.user_id !== userId || e.node_id !== nodeId);
}

/** The joins waiting for the host, earliest first. */
export function waitingOf(state: MeetingState): readonly WaitingEntry[] {
  return state.waiting ?? [];
}

export function participantOf(state: MeetingState, userId: string): Participant | undefined {
  return state.participants.find((p) => p.user_id === userId);
}

export function isActive(state: MeetingState, userId: string): boolean {
  const p = participantOf(state, userId);
  return p !== undefined && p.left_at_ms === null;
}

/** Active participants, earliest-joined first (ties: the earlier join_seq). */
export function activeParticipants(state: MeetingState): Participant[] {
  return state.participants
    .filter((p) => p.left_at_ms === null)
    .sort((a, b) => a.joined_at_ms - b.joined_at_ms || a.join_seq - b.join_seq);
}

/** Who takes over from `leaving`: the earliest-joined other active member, or undefined. */
export function successorOf(state: MeetingState, leaving: string): Participant | undefined {
  return activeParticipants(state).find((p) => p.user_id !== leaving);
}

function mapParticipant(
  state: MeetingState,
  userId: string,
  f: (p: Participant) => Participant,
): readonly Participant[] {
  return state.participants.map((p) => (p.user_id === userId ? f(p) : p));
}

export function assertNever(value: never): never {
  throw new Error(`unhandled: ${JSON.stringify(value)}`);
}
