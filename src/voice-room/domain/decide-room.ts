/** Deciders of the Room and Presence machines. Each: guard first, then the events. */
import type { DecideContext } from '../../domain/decider.js';
import type { Decision } from '../../domain/decider.js';
import {
  DISGUISING_CHARACTERS,
  hasControlCharacters,
  hasDisguisingCharacters,
  hasLoneSurrogate,
  isMediaServerId,
} from '../../domain/text.js';
import { invalidArgument, refuse } from './errors.js';
import {
  isPresent,
  mustBeActive,
  mustBeOwnerOrAdmin,
  mustBePresent,
  mustOutrank,
  seatOf,
} from './guards.js';
import { joinMark, leaveMark } from './crowd.js';
import { presentUserIds, usersLastSeenDue } from './presence-book.js';
import type {
  MicReleaseReason,
  SeatApplication,
  SeatApplicationEnd,
  SeatInvitation,
  SeatInvitationEnd,
  SeatMode,
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from './types.js';

type Cmd<T extends VoiceRoomCommand['type']> = Extract<VoiceRoomCommand, { type: T }>;
type Events = Decision<VoiceRoomEvent>;

export function createRoom(
  state: VoiceRoomState,
  cmd: Cmd<'CreateRoom'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  if (state.status !== 'absent') return refuse('ROOM_ALREADY_EXISTS');
  const title = cmd.title.trim();
  const badTitle = displayTextError('title', title, 1, 100);
  if (badTitle) return badTitle;
  if (cmd.seat_mode !== undefined && !isSeatMode(cmd.seat_mode)) {
    return invalidArgument('seat_mode free or apply');
  }
  if (
    !Number.isInteger(cmd.seat_count) ||
    cmd.seat_count < 1 ||
    cmd.seat_count > settings.maxSeats
  ) {
    return invalidArgument(`seat_count 1-${settings.maxSeats}`);
  }
  if (cmd.media_server != null && !isMediaServerId(cmd.media_server)) {
    return invalidArgument('media_server must be a media server id');
  }
  // creating → active in the same commit: "CreateRoom 持久化成功".
  return [
    {
      type: 'RoomCreated',
      owner_user_id: cmd.owner_user_id,
      title,
      seat_count: cmd.seat_count,
      ...(cmd.media_server ? { media_server: cmd.media_server } : {}),
      ...(cmd.seat_mode === 'apply' ? { seat_mode: cmd.seat_mode } : {}),
      at_ms: ctx.nowMs,
    },
    { type: 'RoomActivated', at_ms: ctx.nowMs },
  ];
}

/**
 * A display text's rule (a title, an announcement): the same as nicknames, plus valid
 * UTF-16 (a lone surrogate has no UTF-8 form for the rooms table or the clients).
 */
export function displayTextError(field: string, text: string, min: number, max: number) {
  if (text.length < min || text.length > max)
    return invalidArgument(`${field} ${min}-${max} chars`);
  if (hasControlCharacters(text)) {
    return invalidArgument(`${field} must not contain control characters`);
  }
  if (hasDisguisingCharacters(text)) return invalidArgument(`${field} ${DISGUISING_CHARACTERS}`);
  if (hasLoneSurrogate(text)) return invalidArgument(`${field} must be valid UTF-16`);
  return null;
}

function isSeatMode(mode: unknown): mode is SeatMode {
  return mode === 'free' || mode === 'apply';
}

/**
 * The room's settings (owner or admin): its title, announcement (empty: none) and seat
 * mode. Only what changes is recorded; going back to `free` ends the pending applications
 * (anyone may now take an idle seat).
 */
export function updateRoom(state: VoiceRoomState, cmd: Cmd<'UpdateRoom'>): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  const title = cmd.title?.trim();
  const announcement = cmd.announcement?.trim();
  if (title !== undefined) {
    const bad = displayTextError('title', title, 1, 100);
    if (bad) return bad;
  }
  if (announcement !== undefined) {
    const bad = displayTextError('announcement', announcement, 0, 500);
    if (bad) return bad;
  }
  if (cmd.seat_mode !== undefined && !isSeatMode(cmd.seat_mode)) {
    return invalidArgument('seat_mode free or apply');
  }
  const changed = {
    ...(title !== undefined && title !== state.title ? { title } : {}),
    ...(announcement !== undefined && announcement !== (state.announcement ?? '')
      ? { announcement }
      : {}),
    ...(cmd.seat_mode !== undefined && cmd.seat_mode !== (state.seat_mode ?? 'free')
      ? { seat_mode: cmd.seat_mode }
      : {}),
  };
  if (Object.keys(changed).length === 0) return [];
  const ends =
    changed.seat_mode === 'free'
      ? (state.seat_applications ?? []).flatMap((a) =>
          endApplicationOf(state, a.user_id, 'seat_mode_changed'),
        )
      : [];
  return [{ type: 'RoomUpdated', operator_user_id: cmd.operator_user_id, ...changed }, ...ends];
}

/**
 * The room's router moves off a dead media server: only an active room still on
 * `from_server` moves (one without a recorded server was on its node's, which the edge names
 * as `from_server`); anything else changes nothing.
 */
export function moveMediaServer(
  state: VoiceRoomState,
  cmd: Cmd<'MoveMediaServer'>,
  ctx: DecideContext,
): Events {
  if (!isMediaServerId(cmd.from_server) || !isMediaServerId(cmd.to_server)) {
    return invalidArgument('from_server and to_server must be media server ids');
  }
  const current = state.media_server ?? null;
  if (state.status !== 'active' || (current !== null && current !== cmd.from_server)) return [];
  return [
    {
      type: 'MediaServerMoved',
      from_server: cmd.from_server,
      to_server: cmd.to_server,
      user_ids: presentUserIds(state.presence),
      at_ms: ctx.nowMs,
    },
  ];
}

/**
 * Presence → closed_left (the presence is cleared), every seat released (numbers and locks
 * kept), one commit. Each occupied seat gets its own MicReleased first, so consumers see
 * every mic session end.
 */
export function closeRoom(
  state: VoiceRoomState,
  cmd: Cmd<'CloseRoom'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  const releases = state.seats.flatMap((seat) =>
    seat.user_id ? releaseSeatOf(state, seat.user_id, 'room_closed') : [],
  );
  const ends = [
    ...(state.seat_applications ?? []).flatMap((a) =>
      endApplicationOf(state, a.user_id, 'room_closed'),
    ),
    ...(state.seat_invitations ?? []).flatMap((i) =>
      endInvitationOf(state, i.user_id, 'room_closed'),
    ),
  ];
  return [
    ...releases,
    ...ends,
    { type: 'RoomClosed', operator_user_id: cmd.operator_user_id, at_ms: ctx.nowMs },
  ];
}

/**
 * absent/left/stale_left/kicked(after unban) → present; a retry only refreshes. A join in
 * the room's crowd is marked so (./crowd.ts).
 */
export function joinRoom(
  state: VoiceRoomState,
  cmd: Cmd<'JoinRoom'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  if (state.banned.includes(cmd.user_id)) return refuse('USER_BANNED');
  if (isPresent(state, cmd.user_id)) {
    return [{ type: 'PresenceRefreshed', user_id: cmd.user_id, at_ms: ctx.nowMs }];
  }
  const mark = joinMark(state, settings, cmd.user_id);
  return [{ type: 'UserJoined', user_id: cmd.user_id, at_ms: ctx.nowMs, ...mark }];
}

/** Refreshes an existing presence only; never creates one. */
export function heartbeat(
  state: VoiceRoomState,
  cmd: Cmd<'RoomHeartbeat'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  return [{ type: 'PresenceRefreshed', user_id: cmd.user_id, at_ms: ctx.nowMs }];
}

/** present → left, releasing the user's seat; a leave of the crowd is marked so. */
export function leaveRoom(
  state: VoiceRoomState,
  cmd: Cmd<'LeaveRoom'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  const mark = leaveMark(state, settings, cmd.user_id);
  return [
    ...releaseSeatOf(state, cmd.user_id, 'leave'),
    ...endSeatRequestsOf(state, cmd.user_id, 'left'),
    { type: 'UserLeft', user_id: cmd.user_id, at_ms: ctx.nowMs, ...mark },
  ];
}

/** Adds the user to the ban set (whether present or not) and frees their seat. */
export function kickUser(state: VoiceRoomState, cmd: Cmd<'KickUser'>): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  if (cmd.user_id === cmd.operator_user_id) return refuse('CANNOT_TARGET_SELF');
  const outranked = mustOutrank(state, cmd.operator_user_id, cmd.user_id, 'CANNOT_KICK_OWNER');
  if (outranked) return outranked;
  if (state.banned.includes(cmd.user_id) && !isPresent(state, cmd.user_id)) return [];
  return [
    ...releaseSeatOf(state, cmd.user_id, 'kicked'),
    ...endSeatRequestsOf(state, cmd.user_id, 'kicked'),
    { type: 'UserKicked', user_id: cmd.user_id, operator_user_id: cmd.operator_user_id },
  ];
}

export function unbanUser(state: VoiceRoomState, cmd: Cmd<'UnbanUser'>): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  if (!state.banned.includes(cmd.user_id)) return refuse('NOT_BANNED');
  return [{ type: 'UserUnbanned', user_id: cmd.user_id, operator_user_id: cmd.operator_user_id }];
}

export function setRoomAdmin(state: VoiceRoomState, cmd: Cmd<'SetRoomAdmin'>): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  if (cmd.operator_user_id !== state.owner_user_id) return refuse('NOT_OWNER');
  if (cmd.user_id === state.owner_user_id) return refuse('CANNOT_TARGET_SELF');
  if (state.admins.includes(cmd.user_id) === cmd.is_admin) return [];
  return [{ type: 'RoomAdminSet', user_id: cmd.user_id, is_admin: cmd.is_admin }];
}

/** Stale presence (with its seat) for every present user past the timeout. */
export function expireStalePresence(
  state: VoiceRoomState,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): VoiceRoomEvent[] {
  if (state.status !== 'active') return [];
  const stale = usersLastSeenDue(
    state.presence,
    (lastSeenAtMs) => lastSeenAtMs + settings.presenceTimeoutMs <= ctx.nowMs,
  );
  return stale.flatMap((userId, nth) => [
    ...releaseSeatOf(state, userId, 'stale'),
    ...endSeatRequestsOf(state, userId, 'stale'),
    {
      type: 'PresenceStale' as const,
      user_id: userId,
      at_ms: ctx.nowMs,
      ...leaveMark(state, settings, userId, nth),
    },
  ]);
}

/**
 * What ends with a user's presence or their taking a seat: their pending application and
 * invitation, each one event.
 */
export function endSeatRequestsOf(
  state: VoiceRoomState,
  userId: string,
  reason: SeatApplicationEnd & SeatInvitationEnd,
): VoiceRoomEvent[] {
  return [...endApplicationOf(state, userId, reason), ...endInvitationOf(state, userId, reason)];
}

/** The user's pending seat invitation ended, if they have one. */
export function endInvitationOf(
  state: VoiceRoomState,
  userId: string,
  reason: SeatInvitationEnd,
): VoiceRoomEvent[] {
  if (!invitationOf(state, userId)) return [];
  return [{ type: 'SeatInvitationEnded', user_id: userId, reason }];
}

/** The user's pending seat invitation, if any. */
export function invitationOf(state: VoiceRoomState, userId: string): SeatInvitation | undefined {
  return state.seat_invitations?.find((i) => i.user_id === userId);
}

/** The user's pending seat application ended, if they have one. */
export function endApplicationOf(
  state: VoiceRoomState,
  userId: string,
  reason: SeatApplicationEnd,
  operatorUserId?: string,
): VoiceRoomEvent[] {
  if (!applicationOf(state, userId)) return [];
  const by = operatorUserId === undefined ? {} : { operator_user_id: operatorUserId };
  return [{ type: 'SeatApplicationEnded', user_id: userId, reason, ...by }];
}

/** The user's pending seat application, if any. */
export function applicationOf(state: VoiceRoomState, userId: string): SeatApplication | undefined {
  return state.seat_applications?.find((a) => a.user_id === userId);
}

/** The user's seat released; `rtcEventTimeMs` (RTC clock) when an RTC event releases it. */
export function releaseSeatOf(
  state: VoiceRoomState,
  userId: string,
  reason: MicReleaseReason,
  rtcEventTimeMs?: number,
): VoiceRoomEvent[] {
  const seat = seatOf(state, userId);
  if (!seat?.mic_session_id) return [];
  return [
    {
      type: 'MicReleased',
      user_id: userId,
      seat_index: seat.seat_index,
      mic_session_id: seat.mic_session_id,
      reason,
      ...(rtcEventTimeMs === undefined ? {} : { event_time_ms: rtcEventTimeMs }),
    },
  ];
}
