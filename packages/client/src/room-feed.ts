/**
 * A room's events over the socket, none missed across a drop: on every (re)open the room is
 * followed again with `room.subscribe {since_event_id}` (the last frame applied), and the
 * ACK's `replay` — the frames committed meanwhile — comes first, then what arrived live
 * while it was asked for. Each frame reaches `onFrame` once (by `event_id`), in order. When
 * the server cannot replay (`refetch`: too long away, or the room moved) or a frame's
 * `prev_event_id` is not the last one applied (a gap), `onRefetch` is called: the app
 * fetches the room's state again over REST. Works for both room kinds (a meeting is
 * followed by its room code; its media still needs `meeting.room.join`).
 *
 * An app that keeps the room's state fetched over REST (a page showing it) passes
 * `fetchFirst` and resolves `onRefetch` with the fetched state's `room_version`: the state is
 * fetched after the first subscription too, frames wait while a fetch runs, the ones the
 * fetched state already holds are skipped, and the chain is checked from it (the rule of
 * docs/protocol.md, "Staying consistent"); a resubscription with no frame applied since the
 * fetch asks for `since_version`.
 */
import { RealtimeError, type Frame, type RealtimeClient } from './realtime.js';
import { isTransient } from './transient.js';

/** Keys every room frame's data carries (docs/protocol.md, "Room frames"). */
export interface RoomFrameMeta {
  readonly app_code: string;
  readonly room_id: string | number;
  readonly room_version: number;
  /** `room_version` of the previous frame pushed for this room (null: unknown). */
  readonly prev_room_version: number | null;
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
  /**
   * What was missed cannot be replayed: fetch the room's state again. Resolve with the
   * fetched state's `room_version` to have the frames it holds skipped and the next ones
   * checked against it; frames that arrive meanwhile wait (then a gap waits for the fetch
   * too). When the feed waits for it (`fetchFirst`, a `refetch` ACK, a gap with a version), a
   * failed fetch is tried again, 250 ms doubling to 5 s, while the socket stays.
   */
  readonly onRefetch: () => void | number | Promise<void | number>;
  /**
   * Fetch the state (`onRefetch`) after the first subscription too, before any frame reaches
   * `onFrame` (default false: frames only, from the subscription on).
   */
  readonly fetchFirst?: boolean;
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
  /** Whether `onRefetch` succeeded once. */
  private hasState = false;
  /** The `room_version` of the last fetched state, when `onRefetch` gave it. */
  private fetched: number | null = null;

  constructor(
    private readonly socket: RealtimeClient,
    private readonly options: RoomFeedOptions,
  ) {}

  /** The last frame applied (what a resubscription replays from; null after a versioned fetch). */
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

  private target(): { room_id: string; app_code?: string } {
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
      const since = this.last
        ? { since_event_id: this.last }
        : this.fetched !== null
          ? { since_version: this.fetched }
          : {};
      const answer = await this.socket.request<{ replay?: RoomFrame[]; refetch?: boolean }>(
        'room.subscribe',
        { ...this.target(), ...since },
      );
      if (this.socket.opens !== opened) return; // a newer socket subscribes again
      if (answer.refetch || (this.options.fetchFirst && !this.hasState)) {
        if (!(await this.fetchState(opened))) return;
      }
      const held = this.held ?? [];
      this.held = null;
      for (const frame of [...(answer.replay ?? []), ...held]) this.receive(frame);
      if (this.stopped) return;
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
    if (this.stopped) return;
    if (this.held) {
      this.held.push(frame);
      return;
    }
    const { event_id: id, prev_event_id: prev, room_version: version } = frame.data;
    if (this.seen.has(id)) return;
    if (this.fetched !== null) {
      if (version <= this.fetched) return; // the fetched state has it
      if (!this.follows(frame.data, this.fetched)) {
        void this.resync(frame);
        return;
      }
    } else if (this.last !== null && prev !== null && prev !== this.last) {
      void this.refetch();
    }
    this.last = id;
    this.seen.add(id);
    if (this.seen.size > SEEN_LIMIT) this.seen.delete(this.seen.values().next().value!);
    this.options.onFrame(frame);
  }

  /** The chain after a fetch at `fetched`: the first frame by its version, then by event id. */
  private follows(data: RoomFrameMeta, fetched: number): boolean {
    if (this.last !== null) return data.prev_event_id === this.last;
    const prev = data.prev_room_version ?? null;
    return prev !== null && prev <= fetched;
  }

  /** A gap with a versioned state: the frames wait for the state fetched again. */
  private async resync(first: RoomFrame): Promise<void> {
    const opened = this.socket.opens;
    this.held = [first];
    // A newer socket's subscription holds the frames now, and replays what they were.
    if (!(await this.fetchState(opened))) return;
    const held = this.held ?? [];
    this.held = null;
    for (const frame of held) this.receive(frame);
  }

  /**
   * Runs `onRefetch` until it succeeds (a failure is tried again with backoff); false when
   * the feed stopped or the socket changed meanwhile.
   */
  private async fetchState(opened: number): Promise<boolean> {
    for (let failures = 0; ; failures += 1) {
      if (this.stopped || this.socket.opens !== opened) return false;
      try {
        this.fetchedAt(await this.options.onRefetch());
        return !this.stopped && this.socket.opens === opened;
      } catch {
        const delay = Math.min(5_000, 250 * 2 ** failures);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** The app's state was fetched (at `version`, when it said). */
  private fetchedAt(version: void | number): void {
    this.hasState = true;
    if (typeof version === 'number') {
      this.fetched = version;
      this.last = null;
    }
  }

  private async refetch(): Promise<void> {
    try {
      this.fetchedAt(await this.options.onRefetch());
    } catch {
      // The app's fetch failed: the next gap or reconnect asks again.
    }
  }
}
