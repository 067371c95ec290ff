/**
 * Read models of the meeting in the seed's field names (room, participant, chat message)
 * and each command's reply. Never the password hash. Ids stay strings and times ms since
 * epoch: the edge renders the seed's int64 ids and `YYYY-MM-DD HH:mm:ss` times.
 */
import { runningRecording } from './decide-recording.js';
import { isWaiting } from './decide-waiting.js';
import { activeParticipants, participantOf } from './evolve.js';
import type {
  EndedReason,
  LeftReason,
  MeetingCommand,
  MeetingEvent,
  MeetingState,
  MeetingStatus,
  Participant,
} from './types.js';

const STATUS_LABELS = { 0: '未开始', 1: '进行中', 2: '已结束' } as const;
export type StatusLabel = (typeof STATUS_LABELS)[MeetingStatus];

export function statusLabel(status: MeetingStatus): StatusLabel {
  return STATUS_LABELS[status];
}

/** 1 主持人 for the host, 0 参会者 for everyone else (role follows host_id). */
export function roleOf(state: MeetingState, userId: string): 0 | 1 {
  return state.host_id === userId ? 1 : 0;
}

export function roleLabel(role: 0 | 1): '主持人' | '参会者' {
  return role === 1 ? '主持人' : '参会者';
}

export interface MeetingView {
  readonly room_code: string;
  readonly title: string;
  readonly host_id: string | null;
  /** 1: an instant meeting, the only type of the MVP. */
  readonly type: 1;
  readonly has_password: boolean;
  readonly max_members: number;
  readonly status: MeetingStatus | null;
  readonly status_label: StatusLabel | null;
  readonly started_at_ms: number | null;
  readonly created_at_ms: number | null;
  readonly ended_at_ms: number | null;
  readonly ended_reason: EndedReason | null;
  readonly online_count: number;
  /** The host's controls beyond the seed, non-defaults only: rendered as the `settings` text. */
  readonly settings: {
    readonly locked?: true;
    readonly unmute_allowed?: false;
    readonly waiting_room?: true;
    readonly recording?: true;
  };
  /** Internal (never rendered): the media server of the meeting's router. */
  readonly media_server: string | null;
}

export interface ParticipantView {
  readonly id: string;
  readonly user_id: string;
  readonly role: 0 | 1;
  readonly role_label: '主持人' | '参会者';
  readonly is_active: boolean;
  readonly joined_at_ms: number;
  readonly left_at_ms: number | null;
  readonly duration: number;
  readonly left_reason: LeftReason | null;
  readonly audio_enabled: boolean;
  readonly video_enabled: boolean;
  readonly hand_raised: boolean;
}

export function meetingView(state: MeetingState): MeetingView {
  return {
    room_code: state.room_code,
    title: state.title,
    host_id: state.host_id,
    type: 1,
    has_password: state.has_password,
    max_members: state.max_members,
    status: state.status,
    status_label: state.status === null ? null : statusLabel(state.status),
    started_at_ms: state.started_at_ms,
    created_at_ms: state.created_at_ms,
    ended_at_ms: state.ended_at_ms,
    ended_reason: state.ended_reason,
    online_count: activeParticipants(state).length,
    settings: {
      ...(state.locked ? { locked: true as const } : {}),
      ...(state.self_unmute_blocked ? { unmute_allowed: false as const } : {}),
      ...(state.waiting_room ? { waiting_room: true as const } : {}),
      ...(runningRecording(state) ? { recording: true as const } : {}),
    },
    media_server: state.media_server,
  };
}

export function participantView(state: MeetingState, p: Participant): ParticipantView {
  const role = roleOf(state, p.user_id);
  return {
    id: p.participant_id,
    user_id: p.user_id,
    role,
    role_label: roleLabel(role),
    is_active: p.left_at_ms === null,
    joined_at_ms: p.joined_at_ms,
    left_at_ms: p.left_at_ms,
    duration: p.duration_s,
    left_reason: p.left_reason,
    audio_enabled: p.audio_enabled,
    video_enabled: p.video_enabled,
    hand_raised: p.hand_raised,
  };
}

/** GET /rooms/:code: the room and its active participants, earliest-joined first. */
export function meetingDetail(state: MeetingState): {
  room: MeetingView;
  participants: ParticipantView[];
  online_count: number;
} {
  const active = activeParticipants(state);
  return {
    room: meetingView(state),
    participants: active.map((p) => participantView(state, p)),
    online_count: active.length,
  };
}

/** A member who left or was kicked, and for how long they were in (seconds). */
interface Departure {
  readonly user_id?: string;
  readonly duration?: number;
}

/**
 * What each command's decision answers, recorded with its outcome so that a retry answers
 * the same. Fields a decision may leave out (a no-op, or an outcome recorded by an earlier
 * version) are optional.
 */
export interface MeetingReplies {
  readonly CreateMeeting: { room: MeetingView; participant: ParticipantView | null };
  readonly JoinMeeting: {
    room: MeetingView;
    participant: ParticipantView | null;
    /** The join waits for the host (absent in replies recorded before the waiting room). */
    waiting?: boolean;
  };
  readonly SetWaitingRoom: { room: MeetingView };
  readonly StartRecording: { room: MeetingView };
  readonly StopRecording: { room: MeetingView };
  /** Who was admitted or denied, in order. */
  readonly AdmitWaiting: { user_ids: string[]; room: MeetingView };
  readonly DenyWaiting: { user_ids: string[]; room: MeetingView };
  readonly LeaveMeeting: Departure;
  readonly KickMember: Departure;
  readonly EndMeeting: { room: MeetingView };
  readonly LockMeeting: { room: MeetingView };
  readonly MuteAll: { room: MeetingView };
  readonly AllowSelfUnmute: { room: MeetingView };
  readonly TransferHost: { old_host_id?: string; new_host_id?: string };
  readonly SendChat: {
    message?: {
      id: number;
      room_code: string;
      user_id: string;
      content: string;
      created_at_ms: number;
    };
  };
  readonly MoveMediaServer: { media_server: string | null };
}

/** What a committed command answers (and what its retries answer). */
export function replyOf(
  state: MeetingState,
  command: MeetingCommand,
  events: readonly MeetingEvent[],
): MeetingReplies[keyof MeetingReplies] | Readonly<Record<string, unknown>> {
  switch (command.type) {
    case 'CreateMeeting':
    case 'JoinMeeting': {
      const userId = command.type === 'CreateMeeting' ? command.host_user_id : command.user_id;
      if (command.type === 'JoinMeeting' && isWaiting(state, userId)) {
        return { room: meetingView(state), participant: null, waiting: true };
      }
      const p = participantOf(state, userId);
      return { room: meetingView(state), participant: p ? participantView(state, p) : null };
    }
    case 'SetWaitingRoom':
    case 'StartRecording':
    case 'StopRecording':
      return { room: meetingView(state) };
    case 'AdmitWaiting':
    case 'DenyWaiting': {
      const decided = command.type === 'AdmitWaiting' ? 'WaitingAdmitted' : 'WaitingLeft';
      return {
        user_ids: events.flatMap((e) =>
          (e.type === 'WaitingAdmitted' || e.type === 'WaitingLeft') && e.type === decided
            ? [e.user_id]
            : [],
        ),
        room: meetingView(state),
      };
    }
    case 'LeaveMeeting':
    case 'KickMember': {
      const left = events.find((e) => e.type === 'MemberLeft');
      return left ? { user_id: left.user_id, duration: left.duration_s } : {};
    }
    case 'EndMeeting':
    case 'LockMeeting':
    case 'MuteAll':
    case 'AllowSelfUnmute':
      return { room: meetingView(state) };
    case 'TransferHost': {
      const changed = events.find((e) => e.type === 'HostChanged');
      return changed ? { old_host_id: changed.old_host_id, new_host_id: changed.new_host_id } : {};
    }
    case 'ChangeMemberState': {
      const changed = events.find((e) => e.type === 'MemberStateChanged');
      if (!changed) return {};
      const { type: _type, at_ms: _at, ...payload } = changed;
      return { room_code: state.room_code, ...payload };
    }
    case 'SendChat': {
      const sent = events.find((e) => e.type === 'ChatSent');
      return sent
        ? {
            message: {
              id: sent.message_id,
              room_code: state.room_code,
              user_id: sent.user_id,
              content: sent.content,
              created_at_ms: sent.at_ms,
            },
          }
        : {};
    }
    // Where the meeting's router is now (the move's, or the one that won before it).
    case 'MoveMediaServer':
      return { media_server: state.media_server ?? null };
    case 'MarkSocketLive':
    case 'MarkSocketsGone':
    case 'ExpireMeetingDeadlines':
      return {};
    default:
      return {};
  }
}
