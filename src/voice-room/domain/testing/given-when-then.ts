/**
 * The voice room's decider spec (the generic given/when/then of src/domain/testing, with the
 * settings every voice-room test runs with) and ready-made events.
 */
import { deciderSpec } from '../../../domain/testing/decider-spec.js';
import { decideVoiceRoom } from '../decide.js';
import { evolveVoiceRoom, initialVoiceRoom } from '../evolve.js';
import type {
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from '../types.js';

/** The settings every decider test runs with. */
export const settings: VoiceRoomSettings = Object.freeze({
  presenceTimeoutMs: 60_000,
  publishTimeoutMs: 15_000,
  maxSeats: 20,
});

export const KEY = Object.freeze({ appCode: 'app-test', roomId: 'room-1' });
/** When the ready-made events happen. */
export const T0 = 1_000_000;
/** When a command runs unless told otherwise: shortly after T0, no deadline due yet. */
export const NOW = T0 + 1_000;
/** The version a command gets unless told otherwise; builders' session ids never clash. */
export const VERSION = 100;
export const OWNER = 'u-owner';

const spec = deciderSpec<VoiceRoomState, VoiceRoomCommand, VoiceRoomEvent>(
  {
    initialState: initialVoiceRoom,
    decide: (state, command, context) => decideVoiceRoom(state, command, context, settings),
    evolve: evolveVoiceRoom,
  },
  { key: KEY, nowMs: NOW, version: VERSION },
);

export { deepFreeze } from '../../../domain/testing/decider-spec.js';
export const { ctx, fold, decide, given, givenState } = spec;

// ---------------------------------------------------------------- ready-made events

/** RoomCreated + RoomActivated: an active room with owner `u-owner` and 8 seats. */
export function activeRoom(
  options: { owner?: string; seats?: number; title?: string; at?: number } = {},
): VoiceRoomEvent[] {
  const at = options.at ?? T0;
  return [
    {
      type: 'RoomCreated',
      owner_user_id: options.owner ?? OWNER,
      title: options.title ?? 'Friday night',
      seat_count: options.seats ?? 8,
      at_ms: at,
    },
    { type: 'RoomActivated', at_ms: at },
  ];
}

export function joined(user_id: string, at = T0): VoiceRoomEvent {
  return { type: 'UserJoined', user_id, at_ms: at };
}

export function left(user_id: string, at = T0): VoiceRoomEvent {
  return { type: 'UserLeft', user_id, at_ms: at };
}

export function adminSet(user_id: string, is_admin = true): VoiceRoomEvent {
  return { type: 'RoomAdminSet', user_id, is_admin };
}

export function kicked(user_id: string, operator_user_id = OWNER): VoiceRoomEvent {
  return { type: 'UserKicked', user_id, operator_user_id };
}

export function locked(seat_index: number, isLocked = true): VoiceRoomEvent {
  return { type: 'MicSeatLockSet', seat_index, locked: isLocked };
}

export function closed(operator_user_id = OWNER, at = T0): VoiceRoomEvent {
  return { type: 'RoomClosed', operator_user_id, at_ms: at };
}

export interface SeatOptions {
  readonly session?: string;
  readonly at?: number;
  readonly version?: number;
}

/** MicTakenUp (the user must already be present). */
export function micTakenUp(
  user_id: string,
  seat_index: number,
  options: SeatOptions = {},
): VoiceRoomEvent {
  const at = options.at ?? T0;
  return {
    type: 'MicTakenUp',
    user_id,
    seat_index,
    mic_session_id: options.session ?? `ms-${user_id}`,
    mic_session_room_version: options.version ?? 10,
    publish_deadline_ms: at + settings.publishTimeoutMs,
    at_ms: at,
  };
}

/** The user joins and takes a seat: pending_publish with session `ms-<user>` by default. */
export function onSeat(
  user_id: string,
  seat_index: number,
  options: SeatOptions = {},
): VoiceRoomEvent[] {
  return [joined(user_id, options.at), micTakenUp(user_id, seat_index, options)];
}

/**
 * MicPublishingConfirmed: by RTC at `eventTimeMs` (RTC clock), or with `source: 'client'`
 * by the client at `atMs` (server clock).
 */
export function publishing(
  user_id: string,
  seat_index: number,
  options: {
    session?: string;
    eventTimeMs?: number;
    source?: 'client' | 'rtc';
    atMs?: number;
  } = {},
): VoiceRoomEvent {
  const common = {
    type: 'MicPublishingConfirmed',
    user_id,
    seat_index,
    mic_session_id: options.session ?? `ms-${user_id}`,
  } as const;
  return options.source === 'client'
    ? { ...common, source: 'client', at_ms: options.atMs ?? NOW }
    : { ...common, source: 'rtc', event_time_ms: options.eventTimeMs ?? T0 + 100 };
}

/** The user joins, takes a seat and publishes (confirmed by RTC at T0 + 100). */
export function publishingOnSeat(
  user_id: string,
  seat_index: number,
  options: SeatOptions & { eventTimeMs?: number } = {},
): VoiceRoomEvent[] {
  return [
    ...onSeat(user_id, seat_index, options),
    publishing(user_id, seat_index, {
      session: options.session ?? `ms-${user_id}`,
      eventTimeMs: options.eventTimeMs ?? (options.at ?? T0) + 100,
    }),
  ];
}

/** MicRtcAnchored: RTC's audio_started (RTC clock) of a seat the client confirmed first. */
export function anchored(
  user_id: string,
  seat_index: number,
  eventTimeMs: number,
  mic_session_id = `ms-${user_id}`,
): VoiceRoomEvent {
  return {
    type: 'MicRtcAnchored',
    user_id,
    seat_index,
    mic_session_id,
    event_time_ms: eventTimeMs,
  };
}

/** MicReleased; `rtcEventTimeMs` (RTC clock) for a release by audio_stopped or room_exited. */
export function released(
  user_id: string,
  seat_index: number,
  reason: Extract<VoiceRoomEvent, { type: 'MicReleased' }>['reason'],
  mic_session_id = `ms-${user_id}`,
  rtcEventTimeMs?: number,
): VoiceRoomEvent {
  return {
    type: 'MicReleased',
    user_id,
    seat_index,
    mic_session_id,
    reason,
    ...(rtcEventTimeMs === undefined ? {} : { event_time_ms: rtcEventTimeMs }),
  };
}
