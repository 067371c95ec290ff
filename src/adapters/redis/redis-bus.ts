/**
 * The realtime bus on Redis pub/sub (cluster mode): one publisher connection (pipelined,
 * so one node's messages keep their order) and one subscriber connection per node, which
 * subscribes a channel once however many local handlers share it. Channels carry the
 * deployment's key prefix. ioredis re-subscribes after a reconnect; what was published in
 * between is lost, which clients see as a room_version gap.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BusHandler, RealtimeBus, Unsubscribe } from '../../realtime/bus.js';
import { createRedisClient } from './redis-client.js';

interface Channel {
  readonly handlers: Set<BusHandler>;
  readonly ready: Promise<void>;
}

export class RedisRealtimeBus implements RealtimeBus {
  private readonly channels = new Map<string, Channel>();

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly keyPrefix: string,
  ) {
    sub.on('messageBuffer', (channel: Buffer, message: Buffer) => {
      const entry = this.channels.get(channel.toString());
      if (entry) for (const handler of entry.handlers) handler(message);
    });
  }

  /** Opens its own two connections to `url`, which log their state changes on `logger`. */
  static connect(url: string, keyPrefix: string, logger: Logger): RedisRealtimeBus {
    const options = { maxRetriesPerRequest: 2, enableAutoPipelining: true };
    return new RedisRealtimeBus(
      createRedisClient(url, options, logger, 'bus-publisher'),
      createRedisClient(url, {}, logger, 'bus-subscriber'),
      keyPrefix,
    );
  }

  async publish(channel: string, payload: string): Promise<void> {
    await this.pub.publish(this.keyPrefix + channel, payload);
  }

  async subscribe(channel: string, handler: BusHandler): Promise<Unsubscribe> {
    const name = this.keyPrefix + channel;
    let entry = this.channels.get(name);
    if (!entry) {
      // Commands on one connection run in order: an UNSUBSCRIBE sent before this
      // SUBSCRIBE cannot undo it.
      entry = { handlers: new Set(), ready: this.sub.subscribe(name).then(() => undefined) };
      this.channels.set(name, entry);
    }
    const joined = entry;
    joined.handlers.add(handler);
    try {
      await joined.ready;
    } catch (error) {
      this.leave(name, joined, handler);
      throw error;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      if (this.leave(name, joined, handler)) await this.sub.unsubscribe(name);
    };
  }

  async close(): Promise<void> {
    this.channels.clear();
    await Promise.allSettled([this.sub.quit(), this.pub.quit()]);
  }

  /** True when the channel has no handler left (the caller unsubscribes). */
  private leave(name: string, entry: Channel, handler: BusHandler): boolean {
    entry.handlers.delete(handler);
    if (entry.handlers.size > 0 || this.channels.get(name) !== entry) return false;
    this.channels.delete(name);
    return true;
  }
}
