/**
 * The hub's keep-alive: every `intervalMs`, a socket that did not answer the previous ping
 * is cut and every other one is pinged. A round goes through the sockets a slice at a time
 * (at most {@link PING_SLICE} sockets or 5 ms), one slice per turn of the event loop: a ping is a socket write (about 10 µs on loopback),
 * so one synchronous loop over 10,000 sockets held the event loop for 100 ms and more,
 * delaying every frame and request of the node meanwhile.
 */
import type { WsConnection } from './connection.js';

/** Sockets pinged per turn at most: a few milliseconds of writes, then other work runs. */
export const PING_SLICE = 256;
/** And at most this long per turn, on a machine whose writes are slow (a busy one). */
const TURN_BUDGET_MS = 5;

export class KeepAlive {
  private readonly timer: NodeJS.Timeout;
  private round: WsConnection[] | null = null;
  private stopped = false;

  constructor(
    intervalMs: number,
    /** The open sockets now (a round pings those still open when their slice comes). */
    private readonly connections: () => ReadonlySet<WsConnection>,
    /** Called for each socket cut for not answering. */
    private readonly onDead: (connection: WsConnection) => void,
    private readonly slice = PING_SLICE,
  ) {
    this.timer = setInterval(() => this.startRound(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private startRound(): void {
    // A round still under way (a very short interval) is not started again over it.
    if (this.round || this.stopped) return;
    this.round = [...this.connections()];
    this.pingSlice(0);
  }

  private pingSlice(from: number): void {
    const round = this.round!;
    const open = this.connections();
    const last = Math.min(round.length, from + this.slice);
    const until = performance.now() + TURN_BUDGET_MS;
    let end = from;
    while (end < last && !this.stopped && performance.now() < until) {
      const connection = round[end++]!;
      if (!open.has(connection)) continue;
      if (!connection.alive) {
        this.onDead(connection);
        connection.terminate();
        continue;
      }
      connection.alive = false;
      connection.ws.ping();
    }
    if (end < round.length && !this.stopped) setImmediate(() => this.pingSlice(end));
    else this.round = null;
  }
}
