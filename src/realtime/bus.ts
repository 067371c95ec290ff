/**
 * Port of the realtime bus: how a room's live events and a user's targeted messages travel
 * from the node that committed them to every node with a socket that wants them. Redis
 * pub/sub in cluster mode, in-process in embedded mode. Best effort (at most once): what a
 * node misses while disconnected is gone, and clients detect it by room_version (the
 * outbox, not this bus, is the durable path).
 */
import type { CellKey } from '../cell/lease.js';

/** Called with the payload exactly as published; must not throw. */
export type BusHandler = (payload: Buffer) => void;
export type Unsubscribe = () => Promise<void>;

export interface RealtimeBus {
  /** Messages one node publishes to one channel arrive in publish order. */
  publish(channel: string, payload: string): Promise<void>;
  /**
   * Resolves once every message published from now on reaches `handler`. Several
   * handlers may share a channel; the adapter subscribes once.
   */
  subscribe(channel: string, handler: BusHandler): Promise<Unsubscribe>;
  close(): Promise<void>;
}

/** One channel per room: its live events, one message per event. */
export function roomChannel(key: CellKey): string {
  return `rt:room:${encodeURIComponent(key.appCode)}:${encodeURIComponent(key.roomId)}`;
}

/** One channel per user of an app: targeted messages (kicked, notifications). */
export function userChannel(appCode: string, userId: string): string {
  return `rt:user:${encodeURIComponent(appCode)}:${encodeURIComponent(userId)}`;
}
