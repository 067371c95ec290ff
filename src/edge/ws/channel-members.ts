/**
 * Which local sockets want which bus channel: the node subscribes to a channel when its
 * first socket joins and unsubscribes when the last one leaves, so a node receives a
 * room's events once however many of its sockets follow the room.
 */
import type { Logger } from 'pino';
import type { RealtimeBus, Unsubscribe } from '../../realtime/bus.js';
import type { WsConnection } from './connection.js';

interface Entry {
  readonly members: Set<WsConnection>;
  readonly subscribed: Promise<Unsubscribe>;
}

const NO_MEMBERS: ReadonlySet<WsConnection> = new Set();

export class ChannelMembers {
  private readonly channels = new Map<string, Entry>();

  constructor(
    private readonly bus: RealtimeBus,
    private readonly logger: Logger,
    private readonly deliver: (
      members: ReadonlySet<WsConnection>,
      payload: Buffer,
      channel: string,
    ) => void,
  ) {}

  /** Channels with at least one member. */
  get size(): number {
    return this.channels.size;
  }

  /** Resolves once the channel's messages reach this node; rejects (and leaves) if not. */
  async add(channel: string, connection: WsConnection): Promise<void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      const members = new Set<WsConnection>();
      const subscribed = this.bus.subscribe(channel, (payload) =>
        this.deliver(members, payload, channel),
      );
      entry = { members, subscribed };
      this.channels.set(channel, entry);
    }
    const joined = entry;
    joined.members.add(connection);
    try {
      await joined.subscribed;
    } catch (error) {
      this.remove(channel, connection);
      throw error;
    }
  }

  /** The local sockets on a channel (empty when none). */
  members(channel: string): ReadonlySet<WsConnection> {
    return this.channels.get(channel)?.members ?? NO_MEMBERS;
  }

  remove(channel: string, connection: WsConnection): void {
    const entry = this.channels.get(channel);
    if (!entry || !entry.members.delete(connection) || entry.members.size > 0) return;
    this.channels.delete(channel);
    entry.subscribed
      .then((unsubscribe) => unsubscribe())
      .catch((err: unknown) => this.logger.debug({ err, channel }, 'unsubscribe failed'));
  }

  async clear(): Promise<void> {
    const entries = [...this.channels.values()];
    this.channels.clear();
    await Promise.allSettled(entries.map((e) => e.subscribed.then((unsubscribe) => unsubscribe())));
  }
}
