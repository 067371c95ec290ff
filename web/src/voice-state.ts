/**
 * A voice room as the page shows it: the GET room view, kept current by the room's frames,
 * with the gap rule of docs/protocol.md ("Staying consistent"). Frames that arrive while a
 * fetch is in flight are buffered; after a fetch at version V the first frame applies when
 * its `prev_room_version` is at most V, each later one when its `prev_event_id` is the last
 * applied `event_id`; anything else is a gap and the room is fetched again.
 */

export type SeatState = 'idle' | 'locked' | 'pending_publish' | 'publishing';

export interface Seat {
  seat_index: number;
  state: SeatState;
  user_id: string | null;
  mic_session_id: string | null;
  publish_deadline_ms: number | null;
}

export interface VoiceRoom {
  room_id: string;
  status: string;
  room_version: number;
  owner_user_id: string | null;
  title: string;
  admins: string[];
  banned: string[];
  online_count: number;
  members: { user_id: string }[];
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
  sender_user_id: string;
  receiver_user_ids: string[];
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
  const user = typeof d.user_id === 'string' ? d.user_id : '';
  const seat = (index: unknown) => next.seats[typeof index === 'number' ? index : -1];
  const removeMember = () => {
    next.members = next.members.filter((m) => m.user_id !== user);
  };
  switch (event) {
    case 'voice.member.joined':
      if (!next.members.some((m) => m.user_id === user)) next.members.push({ user_id: user });
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
      break;
    default:
      break;
  }
  next.online_count = next.members.length;
  return next;
}

export type Verdict = 'apply' | 'skip' | 'gap';

/** The gap rule: what to do with a frame, given the fetched version and the last applied id. */
export function judge(d: RoomFrameData, fetched: number, last: string | null): Verdict {
  if (d.room_version <= fetched) return 'skip';
  if (last === null) {
    return d.prev_room_version !== null && d.prev_room_version <= fetched ? 'apply' : 'gap';
  }
  return d.prev_event_id === last ? 'apply' : 'gap';
}

/**
 * Follows one room: `fetch` is GET room, `onChange` gets each new state, `onEvent` each
 * applied frame (gifts, closing: what the page tells the user). `start()` after the
 * subscription's ACK (and again after every reconnect).
 */
export class RoomTracker {
  room: VoiceRoom | null = null;
  /** How many times a gap made the page fetch the room again (shown, and read by tests). */
  refetches = 0;
  private fetched = -1;
  private last: string | null = null;
  private fetching: Promise<void> | null = null;
  private buffer: { event: string; data: RoomFrameData }[] = [];
  /** Frames held while a resubscription's replay is awaited. */
  private resuming = false;
  /** The event ids applied lately: a live frame may repeat a replayed one. */
  private readonly applied = new Set<string>();

  constructor(
    private readonly fetch: () => Promise<VoiceRoom>,
    private readonly onChange: (room: VoiceRoom) => void,
    private readonly onEvent: (event: string, data: RoomFrameData) => void,
  ) {}

  /** Fetches the room (buffering the frames meanwhile), then applies what was buffered. */
  start(): Promise<void> {
    this.resuming = false;
    if (this.fetching) return this.fetching;
    this.fetching = (async () => {
      try {
        const room = await this.fetch();
        this.room = room;
        this.fetched = room.room_version;
        this.last = null;
        this.onChange(room);
      } finally {
        this.fetching = null;
      }
      const buffered = this.buffer.splice(0);
      for (const f of buffered) this.frame(f.event, f.data);
    })();
    return this.fetching;
  }

  /** The last frame applied, for `room.subscribe {since_event_id}` after a drop. */
  get lastEventId(): string | null {
    return this.room ? this.last : null;
  }

  /** A resubscription is under way: hold the frames until {@link resume} or {@link start}. */
  hold(): void {
    this.resuming = true;
  }

  /**
   * The replay of a resubscription (docs/protocol.md): applied in order like live frames,
   * then what arrived meanwhile; no refetch unless the chain breaks.
   */
  resume(replay: readonly { event: string; data: RoomFrameData }[]): void {
    this.resuming = false;
    const held = this.buffer.splice(0);
    for (const f of [...replay, ...held]) this.frame(f.event, f.data);
  }

  frame(event: string, data: RoomFrameData): void {
    if (this.fetching || !this.room || this.resuming) {
      this.buffer.push({ event, data });
      return;
    }
    if (this.applied.has(data.event_id)) return;
    const verdict = judge(data, this.fetched, this.last);
    if (verdict === 'skip') return;
    if (verdict === 'gap') {
      this.refetches += 1;
      this.buffer.push({ event, data });
      void this.start().catch(() => undefined);
      return;
    }
    this.last = data.event_id;
    this.applied.add(data.event_id);
    if (this.applied.size > 1000) this.applied.delete(this.applied.values().next().value!);
    this.room = applyFrame(this.room, event, data);
    this.onChange(this.room);
    this.onEvent(event, data);
  }
}
