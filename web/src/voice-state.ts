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
  /** 禁麦 by the owner or an admin: the seat's holder is not heard (the mute stays with the seat). */
  muted?: boolean;
}

export type SeatMode = 'free' | 'apply';

/** A pending invitation to a seat (邀请上麦). */
export interface SeatInvitation {
  user_id: number;
  seat_index: number | null;
  operator_user_id: number;
  expires_at_ms: number;
}

export interface VoiceRoom {
  room_id: string;
  status: string;
  room_version: number;
  owner_user_id: number | null;
  title: string;
  // The seat and chat controls' fields (absent from a view without them: none, `free`).
  announcement?: string;
  seat_mode?: SeatMode;
  /** Pending seat applications (the list itself: owner and admins, GET …/seat-applications). */
  seat_application_count?: number;
  seat_invitations?: readonly SeatInvitation[];
  /** Present members who muted their own microphone. */
  mic_muted?: readonly number[];
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

/** A seat freed (or locked): its 禁麦 is the seat's and stays (Object.assign keeps it). */
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
    // A presence's end clears its own microphone mute (its invitation ends by a frame).
    next.mic_muted = next.mic_muted?.filter((u) => u !== user);
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
    case 'voice.seat.muted': {
      const s = seat(d.seat_index);
      if (s) s.muted = d.muted === true;
      break;
    }
    case 'voice.seat.count.changed': {
      const count = typeof d.seat_count === 'number' ? d.seat_count : next.seats.length;
      next.seats = Array.from({ length: count }, (_, i) => next.seats[i] ?? idle(i));
      break;
    }
    case 'voice.room.updated':
      if (typeof d.title === 'string') next.title = d.title;
      if (typeof d.announcement === 'string') next.announcement = d.announcement;
      if (d.seat_mode === 'free' || d.seat_mode === 'apply') next.seat_mode = d.seat_mode;
      break;
    case 'voice.seat.applied':
      next.seat_application_count = (next.seat_application_count ?? 0) + 1;
      break;
    case 'voice.seat.application.ended':
      next.seat_application_count = Math.max(0, (next.seat_application_count ?? 0) - 1);
      break;
    case 'voice.seat.invited':
      next.seat_invitations = [
        ...(next.seat_invitations ?? []).filter((i) => i.user_id !== user),
        {
          user_id: user,
          seat_index: typeof d.seat_index === 'number' ? d.seat_index : null,
          operator_user_id: d.operator_user_id as number,
          expires_at_ms: d.expires_at_ms as number,
        },
      ];
      break;
    case 'voice.seat.invitation.ended':
      next.seat_invitations = next.seat_invitations?.filter((i) => i.user_id !== user);
      break;
    case 'voice.mic.muted':
      next.mic_muted = (next.mic_muted ?? []).filter((u) => u !== user);
      if (d.muted === true) next.mic_muted = [...next.mic_muted, user];
      break;
    case 'voice.room.closed':
      next.status = 'closed';
      next.members = [];
      next.online_count = 0;
      next.seat_invitations = [];
      next.seat_application_count = 0;
      next.mic_muted = [];
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
