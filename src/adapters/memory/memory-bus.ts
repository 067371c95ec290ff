/**
 * The realtime bus inside one process (embedded mode). Delivery is deferred to later
 * turns of the event loop, in publish order, so a commit never runs the fan-out itself.
 * Like a socket read, one turn delivers about {@link SLICE_BYTES}: sockets flush between
 * turns, so a burst does not look like a slow client to the hub's buffer limit.
 */

const SLICE_BYTES = 64 * 1024;
import type { BusHandler, RealtimeBus, Unsubscribe } from '../../realtime/bus.js';

export class MemoryRealtimeBus implements RealtimeBus {
  private readonly channels = new Map<string, Set<BusHandler>>();
  private readonly queue: [string, Buffer][] = [];
  private head = 0;
  private scheduled = false;
  private closed = false;

  publish(channel: string, payload: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error('realtime bus closed'));
    this.queue.push([channel, Buffer.from(payload)]);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
    return Promise.resolve();
  }

  subscribe(channel: string, handler: BusHandler): Promise<Unsubscribe> {
    let handlers = this.channels.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.channels.set(channel, handlers);
    }
    handlers.add(handler);
    const set = handlers;
    return Promise.resolve(() => {
      set.delete(handler);
      if (set.size === 0 && this.channels.get(channel) === set) this.channels.delete(channel);
      return Promise.resolve();
    });
  }

  close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    return Promise.resolve();
  }

  private drain(): void {
    let bytes = 0;
    while (this.head < this.queue.length && bytes < SLICE_BYTES) {
      const [channel, payload] = this.queue[this.head]!;
      this.head += 1;
      bytes += payload.length;
      for (const handler of this.channels.get(channel) ?? []) handler(payload);
    }
    if (this.head < this.queue.length) {
      setImmediate(() => this.drain());
      return;
    }
    this.queue.length = 0;
    this.head = 0;
    this.scheduled = false;
  }
}
