/** Read models of the voice room: the GetRoom view and each command's reply. */
import { seatOf } from './guards.js';
import { presentCount, presentEntries, presentEntriesAfter } from './presence-book.js';
import type {
  MicState,
  Presence,
  SeatApplication,
  SeatMode,
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomState,
} from './types.js';

/** A present member as the views show them. */
export interface MemberView {
  readonly user_id: string;
  readonly joined_at_ms: number;
  readonly last_seen_at_ms: number;
}

export interface RoomView {
  readonly status: VoiceRoomState['status'];
  readonly room_version: number;
  readonly owner_user_id: string | null;
  readonly title: string;
  /** Empty: none. */
  readonly announcement: string;
  readonly seat_mode: SeatMode;
  /** Pending seat applications (list them with ListSeatApplications). */
  readonly seat_application_count: number;
  /** Present members who muted their own microphone. */
  readonly mic_muted: readonly string[];
  /** Pending seat invitations: an invitee finds theirs here after a reconnect. */
  readonly seat_invitations: readonly {
    user_id: string;
    seat_index: number | null;
    operator_user_id: string;
    expires_at_ms: number;
  }[];
  readonly created_at_ms: number | null;
  readonly closed_at_ms: number | null;
  readonly admins: readonly string[];
  readonly banned: readonly string[];
  readonly online_count: number;
  readonly members: readonly MemberView[];
  readonly seats: readonly {
    seat_index: number;
    state: MicState;
    user_id: string | null;
    mic_session_id: string | null;
    publish_deadline_ms: number | null;
    muted: boolean;
  }[];
}

export function roomView(state: VoiceRoomState, version: number): RoomView {
  const members = presentEntries(state.presence).map(memberView);
  return {
    status: state.status,
    room_version: version,
    owner_user_id: state.owner_user_id,
    title: state.title,
    announcement: state.announcement ?? '',
    seat_mode: state.seat_mode ?? 'free',
    seat_application_count: state.seat_applications?.length ?? 0,
    mic_muted: state.mic_muted ?? [],
    seat_invitations: (state.seat_invitations ?? []).map((i) => ({
      user_id: i.user_id,
      seat_index: i.seat_index,
      operator_user_id: i.operator_user_id,
      expires_at_ms: i.expires_at_ms,
    })),
    created_at_ms: state.created_at_ms,
    closed_at_ms: state.closed_at_ms,
    admins: state.admins,
    banned: state.banned,
    online_count: members.length,
    members,
    seats: state.seats.map((s) => ({
      seat_index: s.seat_index,
      state: s.state,
      user_id: s.user_id,
      mic_session_id: s.mic_session_id,
      publish_deadline_ms: s.publish_deadline_ms,
      muted: s.muted ?? false,
    })),
  };
}

function memberView([user_id, p]: [string, Presence]): MemberView {
  return { user_id, joined_at_ms: p.joined_at_ms, last_seen_at_ms: p.last_seen_at_ms };
}

/** One page of the present members (ListMembers), in the members' order. */
export interface MemberPageView {
  /** Every present member, not the page's. */
  readonly online_count: number;
  readonly members: readonly MemberView[];
  /** The page's last member when more follow (where the next page starts), else null. */
  readonly next_after: string | null;
}

/**
 * At most `limit` present members after `after` (the first ones when undefined). One more
 * is read to tell whether more follow, so the last page says so itself: a client never
 * asks for an empty page to find the end.
 */
export function memberPageView(
  state: VoiceRoomState,
  after: string | undefined,
  limit: number,
): MemberPageView {
  const entries = presentEntriesAfter(state.presence, after, limit + 1);
  const members = entries.slice(0, limit).map(memberView);
  const more = entries.length > members.length;
  return {
    online_count: presentCount(state.presence),
    members,
    next_after: more ? (members.at(-1)?.user_id ?? null) : null,
  };
}

/** What a committed command answers (and what its retries answer). */
export function replyOf(
  state: VoiceRoomState,
  command: VoiceRoomCommand,
  events: readonly VoiceRoomEvent[],
): unknown {
  switch (command.type) {
    case 'MicUp':
    case 'ChangeMicSeat':
    case 'ConfirmMicPublishing':
    case 'ApproveSeatApplication':
    case 'AcceptSeatInvitation':
    case 'MoveToSeat': {
      const seat = seatOf(state, command.user_id);
      return seat
        ? {
            seat_index: seat.seat_index,
            state: seat.state,
            mic_session_id: seat.mic_session_id,
            publish_deadline_ms: seat.publish_deadline_ms,
          }
        : {};
    }
    case 'ApplyForSeat': {
      const pending = state.seat_applications?.find((a) => a.user_id === command.user_id);
      if (!pending) return {};
      const { seat_index, applied_at_ms, expires_at_ms } = pending;
      return { seat_index, applied_at_ms, expires_at_ms };
    }
    // Where the room's router is now (the move's, or the one that won before it).
    case 'MoveMediaServer':
      return { media_server: state.media_server ?? null };
    case 'SendGift': {
      const sent = events.find((e) => e.type === 'GiftSent');
      return sent
        ? { gift_id: sent.gift_id, count: sent.count, total_price: sent.total_price }
        : {};
    }
    case 'SendRoomMessage': {
      const sent = events.find((e) => e.type === 'RoomMessageSent');
      return sent ? { message_id: sent.message_id, at_ms: sent.at_ms } : {};
    }
    default:
      return { status: state.status };
  }
}

/** A pending seat application as the API shows it. */
export function applicationView(a: SeatApplication) {
  return {
    user_id: a.user_id,
    seat_index: a.seat_index,
    applied_at_ms: a.applied_at_ms,
    expires_at_ms: a.expires_at_ms,
  };
}

/** ListSeatApplications: the pending ones, oldest first. */
export function seatApplicationsView(state: VoiceRoomState) {
  return { applications: (state.seat_applications ?? []).map(applicationView) };
}
