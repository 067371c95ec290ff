/**
 * Closes edge routers that lost their last listener, after a linger, unless one came back
 * meanwhile: the edges of a room's own routers (./room-routers.ts) and the edges this server
 * holds for rooms whose origin is on another server (./remote-edge-host.ts).
 */
import { isIdleEdge } from './audience.js';
import type { RouterEntry } from './media-entries.js';

export class EdgeLinger {
  readonly #timers = new Map<RouterEntry, NodeJS.Timeout>();

  constructor(private readonly lingerMs: number) {}

  /** A transport of `entry` closed: an edge with no one left closes after the linger. */
  transportLeft(entry: RouterEntry): void {
    if (!isIdleEdge(entry) || this.#timers.has(entry)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(entry);
      if (!isIdleEdge(entry)) return;
      entry.closing = 'idle';
      entry.router.close();
    }, this.lingerMs);
    timer.unref();
    this.#timers.set(entry, timer);
  }

  /** Someone is placed on `entry`, or it closed: no linger runs for it. */
  stop(entry: RouterEntry): void {
    const timer = this.#timers.get(entry);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(entry);
  }
}
