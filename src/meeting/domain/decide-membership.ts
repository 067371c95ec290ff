/**
 * Deciders of who is in the meeting: create, join, leave, kick, end. Each: guard first (in
 * the seed's order), then the events.
 *
 * The join check order of the seed is 房间存在 → 未结束 → 单点参会 → 密码锁定 → 密码校验 →
 * 容量. Steps 3–5 need what the cell does not hold: the single-meeting index (invariant 6,
 * across cells), the wrong-password counter (a KeyValue entry per (user, code): 5 wrong →
 * locked 10 minutes) and bcrypt (slow, so kept out of the cell's serial mailbox). The edge
 * therefore reads the meeting (existence, end, has_password, the hash), runs those steps
 * in that order (lock check, then "no password given", then bcrypt, counting a wrong one),
 * and submits JoinMeeting with its verdicts. The decider then applies the whole order
 * again, authoritatively for what it owns: existence and end (which may have changed since
 * the edge read them), the verdicts, then capacity. The edge may answer a refusal itself
 * only when it is the one the decider would give first.
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import {
  DISGUISING_CHARACTERS,
  hasControlCharacters,
  hasDisguisingCharacters,
  hasLoneSurrogate,
  isMediaServerId,
} from '../../domain/text.js';
import { invalidArgument, refuse } from './errors.js';
import { activeParticipants, isActive, participantOf, successorOf, waitingOf } from './evolve.js';
import { checkId, mustBeHost, mustBeInProgress } from './guards.js';
import { isWaiting, joinWaits, waitForHost, waitingLeft } from './decide-waiting.js';
import { recordingStopped, runningRecording } from './decide-recording.js';
import type {
  LeftReason,
  MeetingCommand,
  MeetingEvent,
  MeetingSettings,
  MeetingState,
} from './types.js';

type Cmd<T extends MeetingCommand['type']> = Extract<MeetingCommand, { type: T }>;
type Events = Decision<MeetingEvent>;

/** The seed's user-visible code: 9 digits as `XXX-XXX-XXX`. */
export const ROOM_CODE_PATTERN = /^\d{3}-\d{3}-\d{3}$/;
const TITLE_MAX_CHARS = 200;
/** A bcrypt hash is 60 characters; anything much longer is not one. */
const PASSWORD_HASH_MAX_CHARS = 255;

/** The host is the first active participant (role 1 主持人); the meeting is in progress. */
export function createMeeting(
  state: MeetingState,
  cmd: Cmd<'CreateMeeting'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): Events {
  const badId =
    checkId(cmd.host_user_id, 'host_user_id') ??
    checkId(cmd.host_participant_id, 'host_participant_id');
  if (badId) return badId;
  if (!Number.isSafeInteger(cmd.meeting_id) || cmd.meeting_id < 1) {
    return invalidArgument('meeting_id must be a positive integer');
  }
  if (typeof cmd.room_code !== 'string' || !ROOM_CODE_PATTERN.test(cmd.room_code)) {
    return invalidArgument('room_code must be XXX-XXX-XXX (9 digits)');
  }
  const badTitle = checkTitle(cmd.title);
  if (badTitle) return badTitle;
  const hash = cmd.password_hash;
  if (
    hash !== null &&
    (typeof hash !== 'string' || hash.length < 1 || hash.length > PASSWORD_HASH_MAX_CHARS)
  ) {
    return invalidArgument('password_hash must be a hash or null');
  }
  const max = cmd.max_members ?? settings.maxMembersCap;
  if (!Number.isSafeInteger(max) || max < 2) return invalidArgument('max_members 2-8');
  const media = cmd.media_server ?? null;
  if (media !== null && !isMediaServerId(media)) {
    return invalidArgument('media_server must be a media server id');
  }
  if (cmd.waiting_room !== undefined && typeof cmd.waiting_room !== 'boolean') {
    return invalidArgument('waiting_room is a boolean');
  }
  if (cmd.in_other_meeting) return refuse('IN_OTHER_MEETING');
  // The code's cell exists already: the edge draws another code and retries.
  if (state.status !== null) return refuse('ROOM_CODE_CONFLICT');
  return [
    {
      type: 'MeetingCreated',
      meeting_id: cmd.meeting_id,
      room_code: cmd.room_code,
      title: cmd.title,
      host_id: cmd.host_user_id,
      has_password: hash !== null,
      password_hash: hash,
      // The seed: "超过将被截断为 8".
      max_members: Math.min(max, settings.maxMembersCap),
      media_server: media,
      ...(cmd.waiting_room ? { waiting_room: true } : {}),
      at_ms: ctx.nowMs,
    },
    {
      type: 'MemberJoined',
      meeting_id: cmd.meeting_id,
      user_id: cmd.host_user_id,
      participant_id: cmd.host_participant_id,
      role: 1,
      rejoined: false,
      join_seq: state.join_count + 1,
      at_ms: ctx.nowMs,
    },
  ];
}

/** Title "1~200 字符": kept as given, but not blank, no control characters, valid UTF-16. */
function checkTitle(title: unknown) {
  if (typeof title !== 'string') return invalidArgument('title must be a string');
  const chars = [...title].length;
  if (title.trim().length === 0 || chars > TITLE_MAX_CHARS) {
    return invalidArgument('title 1-200 characters');
  }
  if (hasControlCharacters(title)) {
    return invalidArgument('title must not contain control characters');
  }
  if (hasDisguisingCharacters(title)) return invalidArgument(`title ${DISGUISING_CHARACTERS}`);
  if (hasLoneSurrogate(title)) return invalidArgument('title must be valid UTF-16');
  return null;
}

/**
 * First join: a new row (role 0 参会者). Re-join after leaving: the same row, with
 * left_at=null, joined_at=now, duration=0. A join into an emptied meeting cancels its TTL
 * countdown (MeetingRevived) and, unless the joiner is the old host, makes the joiner host.
 */
export function joinMeeting(
  state: MeetingState,
  cmd: Cmd<'JoinMeeting'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): Events {
  const guard =
    mustBeInProgress(state) ??
    checkId(cmd.user_id, 'user_id') ??
    checkId(cmd.participant_id, 'participant_id');
  if (guard) return guard;
  if (cmd.in_other_meeting) return refuse('IN_OTHER_MEETING');
  // Before the password steps, so an active member's retry never counts as a wrong attempt.
  if (isActive(state, cmd.user_id)) return refuse('ALREADY_IN_MEETING');
  // A locked meeting takes nobody new; its host, gone and back, is no newcomer.
  if (state.locked && state.host_id !== cmd.user_id) return refuse('MEETING_LOCKED');
  if (state.has_password) {
    // A verdict the edge gave without the password rule (not_required) is refused too.
    switch (cmd.password) {
      case 'ok':
        break;
      case 'locked':
        return refuse('PASSWORD_LOCKED');
      case 'wrong':
        return refuse('PASSWORD_WRONG');
      default:
        return refuse('PASSWORD_REQUIRED');
    }
  }
  // The waiting room: capacity and the single-meeting rule are judged again at admission.
  if (joinWaits(state, cmd.user_id)) return waitForHost(state, cmd, ctx, settings);
  const active = activeParticipants(state);
  if (active.length >= state.max_members) return refuse('MEETING_FULL');

  const row = participantOf(state, cmd.user_id);
  if (!row && state.participants.some((p) => p.participant_id === cmd.participant_id)) {
    return invalidArgument('participant_id is taken');
  }
  const revivesAsHost =
    active.length === 0 && state.host_id !== null && state.host_id !== cmd.user_id;
  const events: MeetingEvent[] = [];
  if (state.empty_deadline_ms !== null) events.push({ type: 'MeetingRevived', at_ms: ctx.nowMs });
  events.push({
    type: 'MemberJoined',
    meeting_id: state.meeting_id ?? null,
    user_id: cmd.user_id,
    participant_id: row ? row.participant_id : cmd.participant_id,
    role: revivesAsHost || state.host_id === cmd.user_id ? 1 : 0,
    rejoined: row !== undefined,
    join_seq: state.join_count + 1,
    at_ms: ctx.nowMs,
  });
  if (revivesAsHost) {
    events.push({
      type: 'HostChanged',
      old_host_id: state.host_id,
      new_host_id: cmd.user_id,
      auto_reason: 'empty_room_revived',
      at_ms: ctx.nowMs,
    });
  }
  return events;
}

/** left_at=now, duration; the host's role passes on, or the empty TTL starts. */
export function leaveMeeting(
  state: MeetingState,
  cmd: Cmd<'LeaveMeeting'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): Events {
  const guard = mustBeInProgress(state);
  if (guard) return guard;
  // Leaving the waiting room gives up the wait.
  if (isWaiting(state, cmd.user_id)) return [waitingLeft(state, cmd.user_id, 'left', ctx)];
  if (!isActive(state, cmd.user_id)) return refuse('NOT_IN_MEETING');
  return departure(state, cmd.user_id, 'leave', ctx, settings);
}

export function kickMember(
  state: MeetingState,
  cmd: Cmd<'KickMember'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): Events {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  if (cmd.target_user_id === cmd.operator_user_id) return refuse('CANNOT_KICK_SELF');
  if (!isActive(state, cmd.target_user_id)) return refuse('TARGET_NOT_ACTIVE');
  return departure(state, cmd.target_user_id, 'kicked', ctx, settings, cmd.operator_user_id);
}

/** Every active member leaves (host_end), then the meeting ends (host_ended). */
export function endMeeting(
  state: MeetingState,
  cmd: Cmd<'EndMeeting'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  return endWith(state, 'host_ended', ctx, cmd.operator_user_id);
}

/** Everyone still inside leaves, then MeetingEnded; what ends a meeting for any reason. */
export function endWith(
  state: MeetingState,
  reason: 'host_ended' | 'empty_ttl' | 'system_error',
  ctx: DecideContext,
  operator?: string,
): MeetingEvent[] {
  const leftReason: LeftReason = reason === 'host_ended' ? 'host_end' : 'system_error';
  return [
    ...activeParticipants(state).map((p) => leftEvent(state, p.user_id, leftReason, ctx, operator)),
    ...waitingOf(state).map((w) => waitingLeft(state, w.user_id, 'meeting_ended', ctx)),
    ...recordingEnds(state, ctx),
    {
      type: 'MeetingEnded',
      reason,
      ...(operator === undefined ? {} : { operator_user_id: operator }),
      ...mediaServerOf(state),
      at_ms: ctx.nowMs,
    },
  ];
}

/** A recording running when the meeting ends stops with it. */
function recordingEnds(state: MeetingState, ctx: DecideContext): MeetingEvent[] {
  const running = runningRecording(state);
  return running ? [recordingStopped(running, 'meeting_ended', null, ctx)] : [];
}

/** Where the media of the meeting lives, for the events that release it. */
function mediaServerOf(state: MeetingState): { media_server?: string } {
  return state.media_server ? { media_server: state.media_server } : {};
}

/**
 * One member leaves: MemberLeft; if it was the host and others remain, the earliest-joined
 * of them becomes host (host_left_with_members); if nobody remains, the empty TTL starts
 * (the meeting is not ended yet).
 */
function departure(
  state: MeetingState,
  userId: string,
  reason: LeftReason,
  ctx: DecideContext,
  settings: MeetingSettings,
  operator?: string,
): MeetingEvent[] {
  const events: MeetingEvent[] = [leftEvent(state, userId, reason, ctx, operator)];
  const next = successorOf(state, userId);
  if (state.host_id === userId && next) {
    events.push({
      type: 'HostChanged',
      old_host_id: userId,
      new_host_id: next.user_id,
      auto_reason: 'host_left_with_members',
      at_ms: ctx.nowMs,
    });
  }
  if (!next) {
    events.push({
      type: 'EmptyTtlStarted',
      deadline_ms: ctx.nowMs + settings.emptyTtlMs,
      at_ms: ctx.nowMs,
    });
  }
  return events;
}

function leftEvent(
  state: MeetingState,
  userId: string,
  reason: LeftReason,
  ctx: DecideContext,
  operator?: string,
): MeetingEvent {
  const p = participantOf(state, userId)!;
  return {
    type: 'MemberLeft',
    user_id: userId,
    participant_id: p.participant_id,
    reason,
    // Whole seconds, as the seed's EXTRACT(EPOCH …); never negative when clocks differ.
    duration_s: Math.max(0, Math.floor((ctx.nowMs - p.joined_at_ms) / 1000)),
    ...(operator === undefined ? {} : { operator_user_id: operator }),
    ...mediaServerOf(state),
    at_ms: ctx.nowMs,
  };
}

/**
 * The meeting's router moves off a dead media server: only a meeting in progress still on
 * `from_server` moves (a repeat, or a meeting already moved or ended, changes nothing).
 */
export function moveMediaServer(
  state: MeetingState,
  cmd: Cmd<'MoveMediaServer'>,
  ctx: DecideContext,
): Events {
  if (!isMediaServerId(cmd.from_server) || !isMediaServerId(cmd.to_server)) {
    return invalidArgument('from_server and to_server must be media server ids');
  }
  if (state.status !== 1 || state.media_server !== cmd.from_server) return [];
  return [
    {
      type: 'MediaServerMoved',
      from_server: cmd.from_server,
      to_server: cmd.to_server,
      user_ids: activeParticipants(state).map((p) => p.user_id),
      at_ms: ctx.nowMs,
    },
  ];
}
