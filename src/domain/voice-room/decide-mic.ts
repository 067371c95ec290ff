/**
 * Deciders of the Mic machine and the RTC callbacks. RTC events can arrive late, twice or
 * out of order: an event of an older session, or older than the last one applied, is a
 * no-op (never an error), and can never clear a newer session.
 */
import type { DecideContext, Decision } from '../../cell/domain.js';
import { refuse } from './errors.js';
import { releaseSeatOf } from './decide-room.js';
import { mustBeActive, mustBeOwnerOrAdmin, mustBePresent, seatAt, seatOf } from './guards.js';
import type {
  MicSeat,
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from './types.js';

type Cmd<T extends VoiceRoomCommand['type']> = Extract<VoiceRoomCommand, { type: T }>;
type Events = Decision<VoiceRoomEvent>;

/** idle ↔ locked; locking an occupied seat first takes its user off. */
export function setMicSeatLock(state: VoiceRoomState, cmd: Cmd<'SetMicSeatLock'>): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  const seat = seatAt(state, cmd.seat_index);
  if (!seat) return refuse('SEAT_NOT_FOUND');
  if ((seat.state === 'locked') === cmd.locked) return [];
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

/** idle → pending_publish with a new mic session and a publish deadline. */
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
  const busy = seatBusy(seat);
  if (busy) return busy;
  return [
    {
      type: 'MicTakenUp',
      user_id: cmd.user_id,
      seat_index: seat.seat_index,
      // Deterministic (the version is unique per room), so replay yields the same id.
      mic_session_id: `ms-${ctx.version}`,
      mic_session_room_version: ctx.version,
      publish_deadline_ms: ctx.nowMs + settings.publishTimeoutMs,
      at_ms: ctx.nowMs,
    },
  ];
}

/** pending_publish/publishing → idle; an owner or admin may take someone else down. */
export function micDown(state: VoiceRoomState, cmd: Cmd<'MicDown'>): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  const forced = cmd.operator_user_id !== undefined && cmd.operator_user_id !== cmd.user_id;
  if (forced) {
    const notAdmin = mustBeOwnerOrAdmin(state, cmd.operator_user_id);
    if (notAdmin) return notAdmin;
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
    },
  ];
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
      event_time_ms: ctx.nowMs,
    },
  ];
}

/** The user's seat if this RTC event belongs to its current session and is not stale. */
function currentSessionSeat(
  state: VoiceRoomState,
  cmd: Cmd<'RtcAudioStarted' | 'RtcAudioStopped' | 'RtcRoomExited'>,
): MicSeat | null {
  if (state.status !== 'active') return null;
  const seat = seatOf(state, cmd.user_id);
  if (!seat?.mic_session_id) return null;
  if (cmd.mic_session_id !== undefined && cmd.mic_session_id !== seat.mic_session_id) return null;
  // Older than the session (an earlier session's event) or than the last applied event.
  if (cmd.event_time_ms < (seat.mic_session_started_at_ms ?? 0)) return null;
  if (cmd.event_time_ms < (seat.last_publish_event_time_ms ?? 0)) return null;
  return seat;
}

export function rtcAudioStarted(state: VoiceRoomState, cmd: Cmd<'RtcAudioStarted'>): Events {
  const seat = currentSessionSeat(state, cmd);
  if (!seat || seat.state !== 'pending_publish') return [];
  return [
    {
      type: 'MicPublishingConfirmed',
      user_id: cmd.user_id,
      seat_index: seat.seat_index,
      mic_session_id: seat.mic_session_id!,
      source: 'rtc',
      event_time_ms: cmd.event_time_ms,
    },
  ];
}

/** publishing → idle on a (current, newer) audio stop. */
export function rtcAudioStopped(state: VoiceRoomState, cmd: Cmd<'RtcAudioStopped'>): Events {
  const seat = currentSessionSeat(state, cmd);
  if (!seat || seat.state !== 'publishing') return [];
  return releaseSeatOf(state, cmd.user_id, 'audio_stopped');
}

/** Frees only the current seat; the user's presence stays (they may reconnect). */
export function rtcRoomExited(state: VoiceRoomState, cmd: Cmd<'RtcRoomExited'>): Events {
  const seat = currentSessionSeat(state, cmd);
  if (!seat) return [];
  return releaseSeatOf(state, cmd.user_id, 'room_exited');
}

/** pending_publish past publish_deadline_ms → idle. */
export function expirePublishDeadlines(
  state: VoiceRoomState,
  ctx: DecideContext,
): VoiceRoomEvent[] {
  if (state.status !== 'active') return [];
  return state.seats.flatMap((seat) =>
    seat.state === 'pending_publish' &&
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

function seatBusy(seat: MicSeat) {
  if (seat.state === 'locked') return refuse('SEAT_LOCKED');
  if (seat.user_id) return refuse('SEAT_OCCUPIED');
  return null;
}
