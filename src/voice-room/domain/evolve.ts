/** Pure and total: the only place the voice room's state changes. */
import {
  emptyPresenceBook,
  presenceIn,
  withoutUser,
  withPresence,
  type PresenceBook,
} from './presence-book.js';
import type { MicSeat, Presence, VoiceRoomEvent, VoiceRoomState } from './types.js';

export function initialVoiceRoom(): VoiceRoomState {
  return {
    status: 'absent',
    owner_user_id: null,
    title: '',
    created_at_ms: null,
    closed_at_ms: null,
    admins: [],
    banned: [],
    presence: emptyPresenceBook(),
    seats: [],
    last_rtc_event_time_ms: {},
  };
}

export function emptySeat(seat_index: number, locked = false): MicSeat {
  return {
    seat_index,
    state: locked ? 'locked' : 'idle',
    user_id: null,
    mic_session_id: null,
    mic_session_room_version: null,
    mic_session_started_at_ms: null,
    last_publish_event_time_ms: null,
    publish_deadline_ms: null,
  };
}

export function evolveVoiceRoom(state: VoiceRoomState, event: VoiceRoomEvent): VoiceRoomState {
  switch (event.type) {
    case 'RoomCreated':
      return {
        ...state,
        status: 'creating',
        owner_user_id: event.owner_user_id,
        title: event.title,
        created_at_ms: event.at_ms,
        seats: Array.from({ length: event.seat_count }, (_, i) => emptySeat(i)),
        ...(event.media_server ? { media_server: event.media_server } : {}),
        ...(event.seat_mode ? { seat_mode: event.seat_mode } : {}),
      };
    case 'RoomUpdated': {
      const { title, announcement, seat_mode } = event;
      return {
        ...state,
        ...(title === undefined ? {} : { title }),
        ...(announcement === undefined ? {} : { announcement }),
        ...(seat_mode === undefined ? {} : { seat_mode }),
      };
    }
    case 'SeatApplied':
      return {
        ...state,
        seat_applications: [
          ...(state.seat_applications ?? []),
          {
            user_id: event.user_id,
            seat_index: event.seat_index,
            applied_at_ms: event.at_ms,
            expires_at_ms: event.expires_at_ms,
          },
        ],
      };
    case 'SeatCountSet':
      return {
        ...state,
        seats:
          event.seat_count < state.seats.length
            ? state.seats.slice(0, event.seat_count)
            : [
                ...state.seats,
                ...Array.from({ length: event.seat_count - state.seats.length }, (_, i) =>
                  emptySeat(state.seats.length + i),
                ),
              ],
      };
    case 'MicMuteSet':
      return {
        ...state,
        mic_muted: event.muted
          ? addOnce(state.mic_muted ?? [], event.user_id)
          : (state.mic_muted ?? []).filter((u) => u !== event.user_id),
      };
    case 'SeatInvited':
      return {
        ...state,
        seat_invitations: [
          ...(state.seat_invitations ?? []),
          {
            user_id: event.user_id,
            seat_index: event.seat_index,
            operator_user_id: event.operator_user_id,
            invited_at_ms: event.at_ms,
            expires_at_ms: event.expires_at_ms,
          },
        ],
      };
    case 'SeatInvitationEnded':
      return {
        ...state,
        seat_invitations: (state.seat_invitations ?? []).filter((i) => i.user_id !== event.user_id),
      };
    case 'SeatApplicationEnded':
      return {
        ...state,
        seat_applications: (state.seat_applications ?? []).filter(
          (a) => a.user_id !== event.user_id,
        ),
      };
    case 'MediaServerMoved':
      return {
        ...state,
        media_server: event.to_server,
        media_moves: (state.media_moves ?? 0) + 1,
      };
    case 'RoomActivated':
      return { ...state, status: 'active' };
    case 'RoomClosed':
      return {
        ...state,
        status: 'closed',
        closed_at_ms: event.at_ms,
        // Everyone present becomes closed_left (no entry): the seed's "clear the presence".
        presence: emptyPresenceBook(),
        ...(state.mic_muted ? { mic_muted: [] } : {}),
        // Seats are released (CloseRoom emits a MicReleased per seat first; logs written
        // before it did have none); their numbers and locks stay.
        seats: state.seats.map((s) => (s.state === 'locked' ? s : freed(s))),
      };
    case 'UserJoined':
      return withBook(
        state,
        withPresence(state.presence, event.user_id, {
          state: 'present',
          joined_at_ms: event.at_ms,
          last_seen_at_ms: event.at_ms,
        }),
      );
    case 'PresenceRefreshed': {
      const p = presenceOf(state, event.user_id);
      return p
        ? withBook(
            state,
            withPresence(state.presence, event.user_id, { ...p, last_seen_at_ms: event.at_ms }),
          )
        : state;
    }
    // left, stale_left, kicked: no entry (VoiceRoomState.presence says why).
    case 'UserLeft':
    case 'PresenceStale':
      return withoutMute(
        withBook(state, withoutUser(state.presence, event.user_id)),
        event.user_id,
      );
    case 'UserKicked':
      return {
        ...withoutMute(withBook(state, withoutUser(state.presence, event.user_id)), event.user_id),
        banned: addOnce(state.banned, event.user_id),
      };
    case 'UserUnbanned':
      return { ...state, banned: state.banned.filter((u) => u !== event.user_id) };
    case 'RoomAdminSet':
      return {
        ...state,
        admins: event.is_admin
          ? addOnce(state.admins, event.user_id)
          : state.admins.filter((u) => u !== event.user_id),
      };
    case 'MicSeatLockSet':
      return withSeat(state, event.seat_index, (s) => freed(s, event.locked));
    case 'SeatMuteSet':
      return withSeat(state, event.seat_index, (s) => {
        const { muted: _was, ...seat } = s;
        return {
          ...seat,
          ...(event.muted ? { muted: true } : {}),
          ...(event.publish_deadline_ms === undefined
            ? {}
            : { publish_deadline_ms: event.publish_deadline_ms }),
        };
      });
    case 'MicTakenUp':
      return withSeat(state, event.seat_index, (s) => ({
        ...s,
        state: 'pending_publish',
        user_id: event.user_id,
        mic_session_id: event.mic_session_id,
        mic_session_room_version: event.mic_session_room_version,
        mic_session_started_at_ms: event.at_ms,
        last_publish_event_time_ms: null,
        publish_deadline_ms: event.publish_deadline_ms,
      }));
    case 'MicSeatChanged': {
      const { muted: _fromMute, ...from } = state.seats[event.from_seat_index]!;
      const moved = withSeat(state, event.from_seat_index, (s) => freed(s));
      // The session moves with the user and waits for publishing again on the new seat,
      // whose mute (the seat's) it takes.
      return withSeat(moved, event.seat_index, (s) => ({
        ...from,
        seat_index: s.seat_index,
        state: 'pending_publish',
        publish_deadline_ms: event.publish_deadline_ms,
        ...(s.muted ? { muted: true } : {}),
      }));
    }
    case 'MicPublishingConfirmed': {
      // Only RTC times go into the RTC fields: a client confirmation carries server time. An
      // old log's second (RTC) confirmation of a live seat lands here as its anchor.
      const rtcTime = event.source === 'rtc' ? event.event_time_ms : null;
      const confirmed = withSeat(state, event.seat_index, (s) => ({
        ...s,
        state: 'publishing',
        publish_deadline_ms: null,
        last_publish_event_time_ms:
          rtcTime === null
            ? s.last_publish_event_time_ms
            : maxOf(s.last_publish_event_time_ms, rtcTime),
      }));
      return rtcTime === null ? confirmed : withRtcTime(confirmed, event.user_id, rtcTime);
    }
    case 'MicRtcAnchored': {
      const anchored = withSeat(state, event.seat_index, (s) => ({
        ...s,
        last_publish_event_time_ms: maxOf(s.last_publish_event_time_ms, event.event_time_ms),
      }));
      return withRtcTime(anchored, event.user_id, event.event_time_ms);
    }
    case 'MicReleased': {
      const released = withSeat(state, event.seat_index, (s) => freed(s));
      return event.event_time_ms === undefined
        ? released
        : withRtcTime(released, event.user_id, event.event_time_ms);
    }
    case 'RoomMessageSent':
      return { ...state, message_count: event.message_id };
    case 'ChatMuteSet': {
      const chat_mutes = chatMutesAfter(state, event);
      const { chat_mutes: _old, ...rest } = state;
      return chat_mutes ? { ...rest, chat_mutes } : rest;
    }
    // The history's row is marked (src/voice-room/sql/projection.ts); the room keeps no text.
    case 'RoomMessageDeleted':
    case 'GiftSent':
      return state;
    default:
      return assertNever(event);
  }
}

/** The chat mutes after `event`: the one set or lifted, and none that ended before it. */
function chatMutesAfter(
  state: VoiceRoomState,
  event: Extract<VoiceRoomEvent, { type: 'ChatMuteSet' }>,
): Readonly<Record<string, number>> | undefined {
  const kept = Object.entries(state.chat_mutes ?? {}).filter(
    ([user, until]) => user !== event.user_id && until > event.at_ms,
  );
  if (event.muted_until_ms !== null) kept.push([event.user_id, event.muted_until_ms]);
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** RTC clock: the last RTC event time applied for the user, or null (also in old snapshots). */
export function lastRtcTimeOf(state: VoiceRoomState, userId: string): number | null {
  const times = state.last_rtc_event_time_ms;
  return times && Object.hasOwn(times, userId) ? times[userId]! : null;
}

function withRtcTime(state: VoiceRoomState, userId: string, time: number): VoiceRoomState {
  return {
    ...state,
    last_rtc_event_time_ms: {
      ...state.last_rtc_event_time_ms,
      [userId]: maxOf(lastRtcTimeOf(state, userId), time),
    },
  };
}

function maxOf(known: number | null, time: number): number {
  return known === null ? time : Math.max(known, time);
}

/** The user's presence if they are present, else undefined. */
export function presenceOf(state: VoiceRoomState, userId: string): Presence | undefined {
  return presenceIn(state.presence, userId);
}

/** The same state (the same object) when the book did not change. */
function withBook(state: VoiceRoomState, presence: PresenceBook): VoiceRoomState {
  return presence === state.presence ? state : { ...state, presence };
}

function withSeat(
  state: VoiceRoomState,
  index: number,
  f: (s: MicSeat) => MicSeat,
): VoiceRoomState {
  return { ...state, seats: state.seats.map((s) => (s.seat_index === index ? f(s) : s)) };
}

/** The seat without its holder; its mute stays (it belongs to the seat). */
function freed(seat: MicSeat, locked = false): MicSeat {
  return { ...emptySeat(seat.seat_index, locked), ...(seat.muted ? { muted: true } : {}) };
}

/** A presence ended: its own mic mute goes with it. */
function withoutMute(state: VoiceRoomState, userId: string): VoiceRoomState {
  if (!state.mic_muted?.includes(userId)) return state;
  return { ...state, mic_muted: state.mic_muted.filter((u) => u !== userId) };
}

function addOnce(list: readonly string[], item: string): readonly string[] {
  return list.includes(item) ? list : [...list, item];
}

export function assertNever(value: never): never {
  throw new Error(`unhandled: ${JSON.stringify(value)}`);
}
