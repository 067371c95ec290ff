/**
 * The meeting's decider spec (the generic given/when/then of src/domain/testing, with the
 * settings every meeting test runs with), ready-made events and commands.
 */
import { deciderSpec } from '../../../domain/testing/decider-spec.js';
import { decideMeeting } from '../decide.js';
import { evolveMeeting, initialMeeting } from '../evolve.js';
import type {
  AutoReason,
  EndedReason,
  LeftReason,
  MeetingCommand,
  MeetingEvent,
  MeetingSettings,
  MeetingState,
  PasswordVerdict,
} from '../types.js';

/**
 * The settings every decider test runs with (the seed's 300 s TTL and 4 h; a 3 s grace, a
 * 9 s presence lease).
 */
export const settings: MeetingSettings = Object.freeze({
  emptyTtlMs: 300_000,
  hostGraceMs: 3_000,
  presenceTtlMs: 9_000,
  staleMs: 4 * 60 * 60 * 1000,
  waitingTtlMs: 10 * 60 * 1000,
  maxMembersCap: 8,
});

export const CODE = '835-000-036';
export const KEY = Object.freeze({ appCode: 'app-test', roomId: CODE });
/** When the ready-made events happen. */
export const T0 = 1_000_000;
/** When a command runs unless told otherwise: shortly after T0, no deadline due yet. */
export const NOW = T0 + 1_000;
export const VERSION = 100;
export const HOST = 'u-host';
/** Two nodes that report sockets (`ROOMS_NODE_ID`s). */
export const NODE_A = 'node-a';
export const NODE_B = 'node-b';
/** The meeting's numeric id (the seed's `id` / `room_id`). */
export const MEETING_ID = 12;
/** A bcrypt-shaped hash (the decider never looks inside it). */
export const HASH = '$2b$10$abcdefghijklmnopqrstuuS7Fq0m8H2b8xQkqg2a9d0mFq7zYb1Ce';

const spec = deciderSpec<MeetingState, MeetingCommand, MeetingEvent>(
  {
    initialState: initialMeeting,
    decide: (state, command, context) => decideMeeting(state, command, context, settings),
    evolve: evolveMeeting,
  },
  { key: KEY, nowMs: NOW, version: VERSION },
);

export { deepFreeze } from '../../../domain/testing/decider-spec.js';
export const { ctx, fold, decide, given, givenState } = spec;

// ---------------------------------------------------------------- ready-made events

/**
 * A user's participant row id in these tests: `p-<user>`, or for a decimal (account) user
 * id a decimal one (`9<user>`), as the SQL store's row ids are: what renders as a JSON number.
 */
export function participantIdOf(user_id: string): string {
  return /^[1-9][0-9]*$/.test(user_id) ? `9${user_id}` : `p-${user_id}`;
}

/** MeetingCreated + the host's MemberJoined (join_seq 1, row `p-u-host`). */
export function created(
  options: { host?: string; hash?: string | null; max?: number; at?: number } = {},
): MeetingEvent[] {
  const host = options.host ?? HOST;
  const at = options.at ?? T0;
  const hash = options.hash ?? null;
  return [
    {
      type: 'MeetingCreated',
      meeting_id: MEETING_ID,
      room_code: CODE,
      title: '周会',
      host_id: host,
      has_password: hash !== null,
      password_hash: hash,
      max_members: options.max ?? 4,
      media_server: null,
      at_ms: at,
    },
    joined(host, 1, at, false, 1),
  ];
}

/** A member's join; `role` 1 when the joiner is (or becomes) the host (default: HOST is). */
export function joined(
  user_id: string,
  join_seq: number,
  at = T0,
  rejoined = false,
  role: 0 | 1 = user_id === HOST ? 1 : 0,
): MeetingEvent {
  return {
    type: 'MemberJoined',
    meeting_id: MEETING_ID,
    user_id,
    participant_id: participantIdOf(user_id),
    role,
    rejoined,
    join_seq,
    at_ms: at,
  };
}

export function left(
  user_id: string,
  options: { reason?: LeftReason; duration?: number; at?: number; by?: string } = {},
): MeetingEvent {
  return {
    type: 'MemberLeft',
    user_id,
    participant_id: participantIdOf(user_id),
    reason: options.reason ?? 'leave',
    duration_s: options.duration ?? 0,
    ...(options.by === undefined ? {} : { operator_user_id: options.by }),
    at_ms: options.at ?? T0,
  };
}

export function emptyTtlStarted(at = T0): MeetingEvent {
  return { type: 'EmptyTtlStarted', deadline_ms: at + settings.emptyTtlMs, at_ms: at };
}

export function hostChanged(
  old_host_id: string,
  new_host_id: string,
  auto_reason?: AutoReason,
  at = NOW,
): MeetingEvent {
  return {
    type: 'HostChanged',
    old_host_id,
    new_host_id,
    ...(auto_reason === undefined ? {} : { auto_reason }),
    at_ms: at,
  };
}

export function graceStarted(user_id = HOST, at = T0): MeetingEvent {
  return { type: 'HostGraceStarted', user_id, deadline_ms: at + settings.hostGraceMs, at_ms: at };
}

/** A live socket notice of `node` at `at`: its lease runs until at + presenceTtlMs. */
export function socketLive(user_id: string, node_id: string, at = T0): MeetingEvent {
  return { type: 'SocketLive', user_id, node_id, until_ms: at + settings.presenceTtlMs, at_ms: at };
}

export function socketsGone(user_id: string, node_id: string, at = NOW): MeetingEvent {
  return { type: 'SocketsGone', user_id, node_id, at_ms: at };
}

export function presenceExpired(user_id: string, node_id: string, at = NOW): MeetingEvent {
  return { type: 'PresenceExpired', user_id, node_id, at_ms: at };
}

export function ended(reason: EndedReason, at = T0, by?: string): MeetingEvent {
  return {
    type: 'MeetingEnded',
    reason,
    ...(by === undefined ? {} : { operator_user_id: by }),
    at_ms: at,
  };
}

/** A meeting created by the host at T0 with `users` joining after, 1 ms apart (seq 2, 3…). */
export function meetingWith(users: readonly string[], options: { max?: number } = {}) {
  return [...created(options), ...users.map((u, i) => joined(u, i + 2, T0 + i + 1))];
}

// ---------------------------------------------------------------- ready-made commands

export function join(
  user_id: string,
  options: { password?: PasswordVerdict; other?: boolean; pid?: string } = {},
): MeetingCommand {
  return {
    type: 'JoinMeeting',
    user_id,
    participant_id: options.pid ?? participantIdOf(user_id),
    in_other_meeting: options.other ?? false,
    password: options.password ?? 'not_required',
  };
}

export function leave(user_id: string): MeetingCommand {
  return { type: 'LeaveMeeting', user_id };
}

export const EXPIRE: MeetingCommand = { type: 'ExpireMeetingDeadlines' };

/** `meeting.room.join` or a refresh on `node_id` (default the host on node A). */
export function live(user_id = HOST, node_id = NODE_A): MeetingCommand {
  return { type: 'MarkSocketLive', user_id, node_id };
}

/** The user's last socket on `node_id` closed (default the host on node A). */
export function gone(user_id = HOST, node_id = NODE_A): MeetingCommand {
  return { type: 'MarkSocketsGone', user_id, node_id };
}
