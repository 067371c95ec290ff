/**
 * The count frame of a room's crowd: joins and leaves of its plain members, past the
 * announced audience size, get no frame of their own (../domain/crowd.ts); instead the
 * room's followers get `voice.audience {room_id, online_count}`, at most one per room per
 * interval (1 s): the first change after a quiet interval at once, the changes within an
 * interval together at its end, with the newest count. Fed by the owner's commits (the host's
 * commit listener), so one node sends it; like `voice.speakers`, it is outside the room's
 * frame chain (a count, not an event: a lost one is corrected by the next).
 */
import type { CommittedBatch } from '../../cell/cell.js';
import { routeKey, type CellKey } from '../../cell/lease.js';
import type { RoomBroadcaster } from '../../edge/room-media/media-call.js';
import type { VoiceRoomEvent } from '../domain/types.js';

export const VOICE_AUDIENCE = 'voice.audience';
const INTERVAL_MS = 1_000;

interface RoomCount {
  readonly key: CellKey;
  /** The newest count not sent yet; null when the last one sent is the newest. */
  pending: number | null;
  /** Runs for an interval after each frame: while it does, counts wait for its end. */
  timer: NodeJS.Timeout | null;
}

export class AudienceCounts {
  readonly #rooms = new Map<string, RoomCount>();

  constructor(
    private readonly broadcaster: RoomBroadcaster,
    private readonly intervalMs = INTERVAL_MS,
  ) {}

  /** The host's commit listener (voice rooms only; never throws). */
  onCommitted(batch: CommittedBatch): void {
    if (batch.kind !== 'voice_room') return;
    let count: number | null = null;
    for (const entry of batch.entries) {
      for (const event of entry.events as readonly VoiceRoomEvent[]) {
        if ('in_crowd' in event && event.in_crowd && event.online_count !== undefined) {
          count = event.online_count;
        }
      }
    }
    if (count !== null) this.#counted(batch.key, count);
  }

  /** Stops the timers; counts not sent yet are dropped. */
  close(): void {
    for (const room of this.#rooms.values()) if (room.timer) clearTimeout(room.timer);
    this.#rooms.clear();
  }

  #counted(key: CellKey, count: number): void {
    const route = routeKey(key);
    const room = this.#rooms.get(route) ?? { key, pending: null, timer: null };
    this.#rooms.set(route, room);
    room.pending = count;
    // A room with a timer sent a frame less than an interval ago: its end sends this one.
    if (!room.timer) this.#send(route, room);
  }

  #send(route: string, room: RoomCount): void {
    if (room.pending === null) return;
    this.broadcaster.toRoom(room.key, VOICE_AUDIENCE, {
      room_id: room.key.roomId,
      online_count: room.pending,
    });
    room.pending = null;
    // Forgotten once quiet for an interval, so the map holds only rooms in motion.
    room.timer = setTimeout(() => {
      room.timer = null;
      if (room.pending !== null) this.#send(route, room);
      else this.#rooms.delete(route);
    }, this.intervalMs);
    room.timer.unref();
  }
}
