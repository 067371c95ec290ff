/**
 * A room's frames written to its followers a slice of sockets at a time, the event loop free
 * between slices. Written in one go, a chat line to 2,000 sockets holds the loop for tens of
 * milliseconds on a small machine, and every command and request of the node waits that long
 * (the voice room's seats under chat: bench/voice-room.bench.ts). One broadcast per room at
 * a time: frames that arrive meanwhile leave together after it, so every socket gets a
 * room's frames in order. A socket that stops following mid-way gets none of the rest.
 * `flush` finishes at once what is under way: before a room's follows end and before a
 * message to one user (a `voice.left`), which must not overtake the room's earlier frames.
 */
interface Broadcast<C> {
  readonly members: ReadonlySet<C>;
  targets: C[];
  next: number;
  frames: Buffer[];
  /** What arrived while this one was under way: the next round, to the followers then. */
  later: Buffer[];
}

export class SlicedBroadcast<C> {
  readonly #running = new Map<ReadonlySet<C>, Broadcast<C>>();

  constructor(
    private readonly slice: number,
    /** Writes `frames` to one socket, in one write; how many were queued. */
    private readonly write: (connection: C, frames: readonly Buffer[]) => number,
    private readonly sent: (count: number) => void,
  ) {}

  send(members: ReadonlySet<C>, frames: readonly Buffer[]): void {
    const running = this.#running.get(members);
    if (running) {
      running.later.push(...frames);
      return;
    }
    const broadcast = { members, targets: [...members], next: 0, frames: [...frames], later: [] };
    if (this.#step(broadcast)) return;
    this.#running.set(members, broadcast);
    this.#schedule(broadcast);
  }

  /** Finishes the room's broadcast under way (every room's without an argument) now. */
  flush(members?: ReadonlySet<C>): void {
    const broadcasts = members ? [this.#running.get(members)] : [...this.#running.values()];
    for (const broadcast of broadcasts) {
      if (!broadcast) continue;
      while (!this.#step(broadcast));
      this.#running.delete(broadcast.members);
    }
  }

  /** One slice; true once the broadcast, and what arrived during it, has been written. */
  #step(b: Broadcast<C>): boolean {
    const end = Math.min(b.next + this.slice, b.targets.length);
    let sent = 0;
    for (; b.next < end; b.next++) {
      const connection = b.targets[b.next]!;
      if (b.members.has(connection)) sent += this.write(connection, b.frames);
    }
    this.sent(sent);
    if (b.next < b.targets.length) return false;
    if (b.later.length === 0) return true;
    b.frames = b.later;
    b.later = [];
    b.targets = [...b.members];
    b.next = 0;
    return false;
  }

  #schedule(b: Broadcast<C>): void {
    setImmediate(() => {
      // Flushed meanwhile, or replaced by a later broadcast of the room.
      if (this.#running.get(b.members) !== b) return;
      if (this.#step(b)) this.#running.delete(b.members);
      else this.#schedule(b);
    });
  }
}
