/**
 * Frames queued per destination (a room's member set) and flushed together: at the end of
 * the turn of the event loop, or, when the last flush was less than `windowMs` ago, once
 * the window has passed. A frame after a quiet spell leaves at once; under a steady stream
 * a destination's frames of one window leave in one call of `flush`, which writes them to
 * each socket in one write: under load a write per frame per socket is the fan-out's main
 * cost, not the bytes.
 */
export class FrameCoalescer<K> {
  private readonly pending = new Map<K, Buffer[]>();
  private scheduled = false;
  private lastFlushAt = -Infinity;

  constructor(
    private readonly windowMs: number,
    /** Sends one destination's frames, in order. */
    private readonly flush: (destination: K, frames: readonly Buffer[]) => void,
  ) {}

  queue(destination: K, frame: Buffer): void {
    const queued = this.pending.get(destination);
    if (queued) queued.push(frame);
    else this.pending.set(destination, [frame]);
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.lastFlushAt + this.windowMs - performance.now();
    // Unref'd: frames waiting for their window never keep a closing process alive.
    if (wait > 0) setTimeout(() => this.flushAll(), wait).unref();
    else setImmediate(() => this.flushAll());
  }

  has(destination: K): boolean {
    return this.pending.has(destination);
  }

  /** Sends everything queued now (also called early, e.g. before a room's follows end). */
  flushAll(): void {
    this.scheduled = false;
    if (this.pending.size === 0) return;
    this.lastFlushAt = performance.now();
    const destinations = [...this.pending];
    this.pending.clear();
    for (const [destination, frames] of destinations) this.flush(destination, frames);
  }
}
