/**
 * A voice room as the page shows it: the GET room view, and each of the room's frames
 * applied to it. Which frames apply, once and in order (the subscription, the frames missed
 * during a drop, the gap rule of docs/protocol.md, "Staying consistent"), is the SDK's
 * RoomFeed's work (packages/client/src/room-feed.ts); the page gives it `applyFrame`.
 */

export type SeatState = 'idle' | 'locked' | 'pending_publish' | 'publishing';

export interface Seat {
  seat_index: number;
  state: SeatState;
  user_id: number | null;
  mic_session_id: string | null;
  publish_deadline_ms: number | null;
}

export interface VoiceRoom {
  room_id: string;
  status: string;
  room_version: number;
  owner_user_id: number | null;
  title: string;
  admins: number[];
  banned: number[];
  online_count: number;
  members: { user_id: number }[];
  seats: Seat[];
}

export interface RoomFrameData {
  room_version: number;
  prev_room_version: number | null;
  event_id: string;
  prev_event_id: string | null;
  [key: string]: unknown;
}

export interface GiftEvent {
  sender_user_id: number;
  receiver_user_ids: number[];
  gift_id: string;
  count: number;
  total_price: number;
}

const idle = (seat_index: number, locked = false): Seat => ({
  seat_index,
  state: locked ? 'locked' : 'idle',
  user_id: null,
  mic_session_id: null,
  publish_deadline_ms: null,
});

/** The room after one frame (a new object: the page's state is replaced, never mutated). */
export function applyFrame(room: VoiceRoom, event: string, d: RoomFrameData): VoiceRoom {
  const next: VoiceRoom = {
    ...room,
    room_version: d.room_version,
    seats: room.seats.map((s) => ({ ...s })),
    members: [...room.members],
    admins: [...room.admins],
    banned: [...room.banned],
  };
  // User ids are JSON numbers (docs/voice-rooms.md); a frame without one names nobody (0).
  const user = typeof d.user_id === 'number' ? d.user_id : 0;
  const seat = (index: unknown) => next.seats[typeof index === 'number' ? index : -1];
  // The count moves with each announced member; `voice.audience` sets it (withAudienceCount).
  const removeMember = () => {
    const before = next.members.length;
    next.members = next.members.filter((m) => m.user_id !== user);
    next.online_count = Math.max(0, next.online_count - (before - next.members.length));
  };
  switch (event) {
    case 'voice.member.joined':
      if (!next.members.some((m) => m.user_id === user)) {
        next.members.push({ user_id: user });
        next.online_count += 1;
      }
      break;
    case 'voice.member.left':
      removeMember();
      break;
    case 'voice.member.kicked':
      removeMember();
      if (!next.banned.includes(user)) next.banned.push(user);
      break;
    case 'voice.member.unbanned':
      next.banned = next.banned.filter((u) => u !== user);
      break;
    case 'voice.admin.changed':
      next.admins = next.admins.filter((u) => u !== user);
      if (d.is_admin === true) next.admins.push(user);
      break;
    case 'voice.seat.locked': {
      const s = seat(d.seat_index);
      if (s) Object.assign(s, idle(s.seat_index, d.locked === true));
      break;
    }
    case 'voice.mic.up': {
      const s = seat(d.seat_index);
      if (s) {
        Object.assign(s, {
          state: 'pending_publish',
          user_id: user,
          mic_session_id: d.mic_session_id as string,
          publish_deadline_ms: d.publish_deadline_ms as number,
        });
      }
      break;
    }
    case 'voice.mic.changed': {
      const from = seat(d.from_seat_index);
      const to = seat(d.seat_index);
      if (from) Object.assign(from, idle(from.seat_index));
      if (to) {
        Object.assign(to, {
          state: 'pending_publish',
          user_id: user,
          mic_session_id: d.mic_session_id as string,
          publish_deadline_ms: d.publish_deadline_ms as number,
        });
      }
      break;
    }
    case 'voice.mic.publishing': {
      const s = seat(d.seat_index);
      if (s) Object.assign(s, { state: 'publishing', publish_deadline_ms: null });
      break;
    }
    case 'voice.mic.released': {
      const s = seat(d.seat_index);
      if (s) Object.assign(s, idle(s.seat_index));
      break;
    }
    case 'voice.room.closed':
      next.status = 'closed';
      next.members = [];
      next.online_count = 0;
      break;
    default:
      break;
  }
  return next;
}

/**
 * The room with the count of a `voice.audience` frame: past the announced audience size the
 * crowd's joins and leaves have no frame of their own, so the members list holds the
 * announced ones and this count is the room's.
 */
export function withAudienceCount(room: VoiceRoom, onlineCount: number): VoiceRoom {
  return { ...room, online_count: onlineCount };
}
