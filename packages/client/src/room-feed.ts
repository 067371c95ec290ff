/**
 * A room's events over the socket, none missed across a drop: on every (re)open the room is
 * followed again with `room.subscribe {since_event_id}` (the last frame applied), and the
 * ACK's `replay` — the frames committed meanwhile — comes first, then what arrived live
 * while it was asked for. Each frame reaches `onFrame` once (by `event_id`), in order. When
 * the server cannot replay (`refetch`: too long away, or the room moved) or a frame's
 * `prev_event_id` is not the last one applied (a gap), `onRefetch` is called: the app
 * fetches the room's state again over REST. Works for both room kinds (a meeting is
 * followed by its room code; its media still needs `meeting.room.join`).
 */
import { RealtimeError, type Frame, type RealtimeClient } from './realtime.js';
import { isTransient } from './transient.js';

/** Keys every room frame's data carries (docs/protocol.md, "Room frames"). */
export interface RoomFrameMeta {
  readonly app_code: string;
  readonly room_id: string | number;
  readonly room_version: number;
  readonly event_id: string;
  readonly prev_event_id: string | null;
  readonly room_code?: string;
}

export type RoomFrame = Frame<RoomFrameMeta & Record<string, unknown>>;

export interface RoomFeedOptions {
  /** The voice room's `room_id`, or the meeting's room code. */
  readonly room: string;
  /** The room's app (default: the caller's). */
  readonly appCode?: string;
  /** Each frame of the room, once, in order. */
  readonly onFrame: (frame: RoomFrame) => void;
  /** What was missed cannot be replayed: fetch the room's state again. */
  readonly onRefetch: () => void | Promise<void>;
  /** Followed on this socket, what was missed applied (after each subscription). */
  readonly onLive?: () => void;
  /** The room cannot be followed (not in it any more, the room ended…): the ACK's refusal. */
  readonly onError?: (error: RealtimeError) => void;
}

/** How many recent event ids are remembered to drop a frame seen twice (live and replayed). */
const SEEN_LIMIT = 1000;

export class RoomFeed {
  private last: string | null = null;
  private held: RoomFrame[] | null = null;
  private readonly seen = new Set<string>();
  private readonly offs: (() => void)[] = [];
  private stopped = false;
  private live = false;

  constructor(
    private readonly socket: RealtimeClient,
    private readonly options: RoomFeedOptions,
  ) {}

  /** The last frame applied (what a resubscription replays from). */
  get lastEventId(): string | null {
    return this.last;
  }

  /** Whether the room is followed on the current socket (false from a drop to the next ACK). */
  get isLive(): boolean {
    return this.live && this.socket.isOpen;
  }

  /** Follows the room now if the socket is open, and again after every reopen. */
  start(): void {
    this.offs.push(
      this.socket.onAny((frame) => {
        if (this.isOurs(frame)) this.receive(frame as RoomFrame);
      }),
      this.socket.onOpen(() => void this.subscribe(this.socket.opens, 0)),
      this.socket.onClose(() => {
        this.live = false;
      }),
    );
  }

  /** Stops following (and tells the server, if the socket is open). */
  stop(): void {
    this.stopped = true;
    for (const off of this.offs.splice(0)) off();
    if (this.socket.isOpen) {
      void this.socket.request('room.unsubscribe', this.target()).catch(() => undefined);
    }
  }

  private target(): Record<string, unknown> {
    return {
      room_id: this.options.room,
      ...(this.options.appCode ? { app_code: this.options.appCode } : {}),
    };
  }

  private isOurs(frame: Frame): boolean {
    const data = frame.data as Partial<RoomFrameMeta> | undefined;
    if (typeof data?.event_id !== 'string') return false;
    return data.room_id === this.options.room || data.room_code === this.options.room;
  }

  private async subscribe(opened: number, failures: number): Promise<void> {
    if (this.stopped || this.socket.opens !== opened || !this.socket.isOpen) return;
    this.held = [];
    try {
      const since = this.last ? { since_event_id: this.last } : {};
      const answer = await this.socket.request<{ replay?: RoomFrame[]; refetch?: boolean }>(
        'room.subscribe',
        { ...this.target(), ...since },
      );
      if (this.socket.opens !== opened) return; // a newer socket subscribes again
      const held = this.held;
      this.held = null;
      if (answer.refetch) await this.refetch();
      for (const frame of [...(answer.replay ?? []), ...held]) this.receive(frame);
      this.live = true;
      this.options.onLive?.();
    } catch (error) {
      if (this.stopped || this.socket.opens !== opened) return;
      if (isTransient(error)) {
        const delay = Math.min(5_000, 250 * 2 ** failures);
        setTimeout(() => void this.subscribe(opened, failures + 1), delay);
        return;
      }
      this.held = null;
      if (error instanceof RealtimeError) this.options.onError?.(error);
    }
  }

  private receive(frame: RoomFrame): void {
    if (this.held) {
      this.held.push(frame);
      return;
    }
    const { event_id: id, prev_event_id: prev } = frame.data;
    if (this.seen.has(id)) return;
    if (this.last !== null && prev !== null && prev !== this.last) void this.refetch();
    this.last = id;
    this.seen.add(id);
    if (this.seen.size > SEEN_LIMIT) this.seen.delete(this.seen.values().next().value!);
    this.options.onFrame(frame);
  }

  private async refetch(): Promise<void> {
    try {
      await this.options.onRefetch();
    } catch {
      // The app's fetch failed: the next gap or reconnect asks again.
    }
  }
}
