/**
 * Deciders of the Mic machine and the RTC callbacks. RTC events can arrive late, twice or
 * out of order: an event of an older session, or older than the last one applied, is a
 * no-op (never an error), and can never clear a newer session.
 *
 * Two clocks, never compared with each other: MicUp, deadlines and client confirmations run
 * on this server's clock (ctx.nowMs); an RTC event's `event_time_ms` is the RTC provider's
 * (e.g. TRTC's EventMsTs, or EventTs in whole seconds), which may run ahead or behind. So an
 * RTC event is only ever compared with RTC times already applied: the session's anchor
 * (`last_publish_event_time_ms`, its last applied RTC event) and, for events without a
 * session id, the user's last applied RTC event (`last_rtc_event_time_ms`).
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { invalidArgument, refuse } from './errors.js';
import { endSeatRequestsOf, releaseSeatOf } from './decide-room.js';
import { lastRtcTimeOf } from './evolve.js';
import {
  isOwnerOrAdmin,
  mustBeActive,
  mustBeOwnerOrAdmin,
  mustBePresent,
  mustOutrank,
  seatAt,
  seatOf,
} from './guards.js';
import type {
  MicSeat,
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from './types.js';

type Cmd<T extends VoiceRoomCommand['type']> = Extract<VoiceRoomCommand, { type: T }>;
type Events = Decision<VoiceRoomEvent>;
type RtcCmd = Cmd<'RtcAudioStarted' | 'RtcAudioStopped' | 'RtcRoomExited'>;

/**
 * idle ↔ locked; locking an occupied seat first takes its user off, so it follows the kick
 * rule (an admin cannot lock the owner's or another admin's seat while they hold it).
 */
export function setMicSeatLock(state: VoiceRoomState, cmd: Cmd<'SetMicSeatLock'>): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  const seat = seatAt(state, cmd.seat_index);
  if (!seat) return refuse('SEAT_NOT_FOUND');
  if ((seat.state === 'locked') === cmd.locked) return [];
  if (cmd.locked && seat.user_id && seat.user_id !== cmd.operator_user_id) {
    const outranked = mustOutrank(state, cmd.operator_user_id, seat.user_id, 'CANNOT_TARGET_OWNER');
    if (outranked) return outranked;
  }
  const takeOff: VoiceRoomEvent[] =
    seat.user_id && seat.mic_session_id
      ? [
          {
            type: 'MicReleased',
            user_id: seat.user_id,
            seat_index: seat.seat_index,
            mic_session_id: seat.mic_session_id,
            reason: 'seat_locked',
          },
        ]
      : [];
  return [...takeOff, { type: 'MicSeatLockSet', seat_index: seat.seat_index, locked: cmd.locked }];
}

/**
 * idle → pending_publish with a new mic session and a publish deadline. In seat mode
 * `apply`, only the owner and admins take a seat this way (the others apply).
 */
export function micUp(
  state: VoiceRoomState,
  cmd: Cmd<'MicUp'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  const seat = seatAt(state, cmd.seat_index);
  if (!seat) return refuse('SEAT_NOT_FOUND');
  const mine = seatOf(state, cmd.user_id);
  if (mine) return mine.seat_index === seat.seat_index ? [] : refuse('ALREADY_ON_SEAT');
  if (state.seat_mode === 'apply' && !isOwnerOrAdmin(state, cmd.user_id)) {
    return refuse('SEAT_APPLICATION_REQUIRED');
  }
  const busy = seatBusy(seat);
  if (busy) return busy;
  return [
    ...endSeatRequestsOf(state, cmd.user_id, 'seated'),
    takeSeat(cmd.user_id, seat.seat_index, ctx, settings),
  ];
}

/** The user takes the idle seat: a new mic session, waiting for publishing. */
export function takeSeat(
  userId: string,
  seatIndex: number,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): VoiceRoomEvent {
  return {
    type: 'MicTakenUp',
    user_id: userId,
    seat_index: seatIndex,
    // Deterministic (the version is unique per room), so replay yields the same id.
    mic_session_id: `ms-${ctx.version}`,
    mic_session_room_version: ctx.version,
    publish_deadline_ms: ctx.nowMs + settings.publishTimeoutMs,
    at_ms: ctx.nowMs,
  };
}

/**
 * pending_publish/publishing → idle; an owner or admin may take someone else down, by the
 * kick rule (the owner anyone, an admin only plain members).
 */
export function micDown(state: VoiceRoomState, cmd: Cmd<'MicDown'>): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  const forced = cmd.operator_user_id !== undefined && cmd.operator_user_id !== cmd.user_id;
  if (forced) {
    const refused =
      mustBeOwnerOrAdmin(state, cmd.operator_user_id) ??
      mustOutrank(state, cmd.operator_user_id, cmd.user_id, 'CANNOT_TARGET_OWNER');
    if (refused) return refused;
  }
  if (!seatOf(state, cmd.user_id)) return refuse('NOT_ON_SEAT');
  return releaseSeatOf(state, cmd.user_id, forced ? 'forced_down' : 'mic_down');
}

/** Moves the user, keeping the mic session; the new seat waits for publishing again. */
export function changeMicSeat(
  state: VoiceRoomState,
  cmd: Cmd<'ChangeMicSeat'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  return moveSeat(state, cmd.user_id, cmd.seat_index, ctx, settings);
}

/**
 * The owner or an admin moves a seat holder to an idle seat, keeping the mic session as
 * ChangeMicSeat does; moving someone else follows the kick rule.
 */
export function moveToSeat(
  state: VoiceRoomState,
  cmd: Cmd<'MoveToSeat'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  if (cmd.user_id !== cmd.operator_user_id) {
    const outranked = mustOutrank(state, cmd.operator_user_id, cmd.user_id, 'CANNOT_TARGET_OWNER');
    if (outranked) return outranked;
  }
  const by = cmd.user_id === cmd.operator_user_id ? undefined : cmd.operator_user_id;
  return moveSeat(state, cmd.user_id, cmd.seat_index, ctx, settings, by);
}

function moveSeat(
  state: VoiceRoomState,
  userId: string,
  seatIndex: number,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
  operatorUserId?: string,
): Events {
  const cmd = { user_id: userId, seat_index: seatIndex };
  const from = seatOf(state, cmd.user_id);
  if (!from?.mic_session_id) return refuse('NOT_ON_SEAT');
  const to = seatAt(state, cmd.seat_index);
  if (!to) return refuse('SEAT_NOT_FOUND');
  if (to.seat_index === from.seat_index) return [];
  const busy = seatBusy(to);
  if (busy) return busy;
  return [
    {
      type: 'MicSeatChanged',
      user_id: cmd.user_id,
      from_seat_index: from.seat_index,
      seat_index: to.seat_index,
      mic_session_id: from.mic_session_id,
      publish_deadline_ms: ctx.nowMs + settings.publishTimeoutMs,
      ...(operatorUserId === undefined ? {} : { operator_user_id: operatorUserId }),
    },
  ];
}

/**
 * The number of seats (owner or admin): more seats are added idle; fewer only when every
 * seat removed holds nobody (a locked one goes with its lock).
 */
export function setSeatCount(
  state: VoiceRoomState,
  cmd: Cmd<'SetSeatCount'>,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  if (
    !Number.isInteger(cmd.seat_count) ||
    cmd.seat_count < 1 ||
    cmd.seat_count > settings.maxSeats
  ) {
    return invalidArgument(`seat_count 1-${settings.maxSeats}`);
  }
  if (cmd.seat_count === state.seats.length) return [];
  const held = state.seats.slice(cmd.seat_count).find((s) => s.user_id !== null);
  if (held) return refuse('SEAT_OCCUPIED', `seat ${held.seat_index} is held`);
  return [
    { type: 'SeatCountSet', seat_count: cmd.seat_count, operator_user_id: cmd.operator_user_id },
  ];
}

/**
 * 禁麦 (owner or admin): the seat stays held with its session, its holder is not heard; a
 * held seat follows the kick rule. Unmuting a pending seat starts its publish deadline again.
 */
export function setSeatMuted(
  state: VoiceRoomState,
  cmd: Cmd<'SetSeatMuted'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  const seat = seatAt(state, cmd.seat_index);
  if (!seat) return refuse('SEAT_NOT_FOUND');
  if ((seat.muted ?? false) === cmd.muted) return [];
  if (seat.user_id && seat.user_id !== cmd.operator_user_id) {
    const outranked = mustOutrank(state, cmd.operator_user_id, seat.user_id, 'CANNOT_TARGET_OWNER');
    if (outranked) return outranked;
  }
  const restart =
    !cmd.muted && seat.state === 'pending_publish'
      ? { publish_deadline_ms: ctx.nowMs + settings.publishTimeoutMs }
      : {};
  return [
    {
      type: 'SeatMuteSet',
      seat_index: seat.seat_index,
      muted: cmd.muted,
      operator_user_id: cmd.operator_user_id,
      ...restart,
    },
  ];
}

/** A present member's own microphone mute, shown to the room; the same again is a no-op. */
export function setMicMuted(state: VoiceRoomState, cmd: Cmd<'SetMicMuted'>): Events {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  if ((state.mic_muted ?? []).includes(cmd.user_id) === cmd.muted) return [];
  return [{ type: 'MicMuteSet', user_id: cmd.user_id, muted: cmd.muted }];
}

/** pending_publish → publishing, for the current session only. */
export function confirmMicPublishing(
  state: VoiceRoomState,
  cmd: Cmd<'ConfirmMicPublishing'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  const seat = seatOf(state, cmd.user_id);
  if (!seat?.mic_session_id) return refuse('NOT_ON_SEAT');
  if (seat.mic_session_id !== cmd.mic_session_id) return refuse('MIC_SESSION_MISMATCH');
  if (seat.state === 'publishing') return [];
  return [
    {
      type: 'MicPublishingConfirmed',
      user_id: cmd.user_id,
      seat_index: seat.seat_index,
      mic_session_id: seat.mic_session_id,
      source: 'client',
      at_ms: ctx.nowMs,
    },
  ];
}

/**
 * The seat of the user's current session, if this RTC event may be about it: the room is
 * active, the user holds a seat, and a session id, when the event has one, is that seat's.
 */
function rtcSeat(state: VoiceRoomState, cmd: RtcCmd): MicSeat | null {
  if (state.status !== 'active') return null;
  const seat = seatOf(state, cmd.user_id);
  if (!seat?.mic_session_id) return null;
  if (cmd.mic_session_id !== undefined && cmd.mic_session_id !== seat.mic_session_id) return null;
  return seat;
}

/**
 * audio_started: pending_publish → publishing. It must be newer than the RTC time it is
 * compared with: the session's anchor for an event naming the session; for one without a
 * session id (TRTC), also every RTC event applied for the user, so a late start of an
 * earlier session is dropped. A seat the client confirmed first is already live: it only
 * gets its RTC anchor (MicRtcAnchored), so the seat goes live once for consumers.
 */
export function rtcAudioStarted(state: VoiceRoomState, cmd: Cmd<'RtcAudioStarted'>): Events {
  const seat = rtcSeat(state, cmd);
  if (!seat) return [];
  const anchor = seat.last_publish_event_time_ms;
  const userTime = cmd.mic_session_id === undefined ? lastRtcTimeOf(state, cmd.user_id) : null;
  const floor = Math.max(anchor ?? -Infinity, userTime ?? -Infinity);
  if (cmd.event_time_ms <= floor) return [];
  const session = {
    user_id: cmd.user_id,
    seat_index: seat.seat_index,
    mic_session_id: seat.mic_session_id!,
  };
  if (seat.state === 'pending_publish') {
    return [
      {
        type: 'MicPublishingConfirmed',
        ...session,
        source: 'rtc',
        event_time_ms: cmd.event_time_ms,
      },
    ];
  }
  if (anchor !== null) return [];
  return [{ type: 'MicRtcAnchored', ...session, event_time_ms: cmd.event_time_ms }];
}

/**
 * Whether an RTC stop or exit is about the current session: one naming the session is, unless
 * older than the session's anchor; one without a session id only once the session has an RTC
 * anchor and is not older than it (before that it may be an earlier session's, whatever its
 * time: a pending seat is then left to the publish timeout).
 */
function endsCurrentSession(seat: MicSeat, cmd: RtcCmd): boolean {
  const anchor = seat.last_publish_event_time_ms;
  if (anchor === null) return cmd.mic_session_id !== undefined;
  return cmd.event_time_ms >= anchor;
}

/** publishing → idle on an audio stop of the current session. */
export function rtcAudioStopped(state: VoiceRoomState, cmd: Cmd<'RtcAudioStopped'>): Events {
  const seat = rtcSeat(state, cmd);
  if (!seat || seat.state !== 'publishing' || !endsCurrentSession(seat, cmd)) return [];
  // A muted seat's audio stops by the mute itself (its producer paused): the seat stays.
  if (seat.muted) return [];
  return releaseSeatOf(state, cmd.user_id, 'audio_stopped', cmd.event_time_ms);
}

/** Frees only the current seat; the user's presence stays (they may reconnect). */
export function rtcRoomExited(state: VoiceRoomState, cmd: Cmd<'RtcRoomExited'>): Events {
  const seat = rtcSeat(state, cmd);
  if (!seat || !endsCurrentSession(seat, cmd)) return [];
  return releaseSeatOf(state, cmd.user_id, 'room_exited', cmd.event_time_ms);
}

/** pending_publish past publish_deadline_ms → idle. */
export function expirePublishDeadlines(
  state: VoiceRoomState,
  ctx: DecideContext,
): VoiceRoomEvent[] {
  if (state.status !== 'active') return [];
  return state.seats.flatMap((seat) =>
    seat.state === 'pending_publish' &&
    !seat.muted &&
    seat.user_id &&
    seat.mic_session_id &&
    (seat.publish_deadline_ms ?? Infinity) <= ctx.nowMs
      ? [
          {
            type: 'MicReleased' as const,
            user_id: seat.user_id,
            seat_index: seat.seat_index,
            mic_session_id: seat.mic_session_id,
            reason: 'publish_timeout' as const,
          },
        ]
      : [],
  );
}

export function seatBusy(seat: MicSeat) {
  if (seat.state === 'locked') return refuse('SEAT_LOCKED');
  if (seat.user_id) return refuse('SEAT_OCCUPIED');
  return null;
}
