/* eslint-disable @typescript-eslint/require-await -- async so that a thrown check becomes a
   rejection, exactly as with the Redis adapter; the work itself is deliberately synchronous. */
import type { LiveNode, NodeRegistry } from '../../cell/lease.js';
import type { Clock } from '../../shared/clock.js';
import { checkTtl } from '../../cell/lease.js';

interface Entry {
  readonly advertiseAddr: string;
  readonly expiresAtMs: number;
}

/**
 * In-process {@link NodeRegistry} with TTLs measured on an injected {@link Clock}; shared by the
 * hosts of one process like {@link MemoryLeaseManager}. Entries are few (one per node), so expired
 * ones are only dropped when looked up.
 */
export class MemoryNodeRegistry implements NodeRegistry {
  readonly #clock: Clock;
  readonly #nodes = new Map<string, Entry>();

  constructor({ clock }: { clock: Clock }) {
    this.#clock = clock;
  }

  async register(nodeId: string, advertiseAddr: string, ttlMs: number): Promise<void> {
    const ttl = checkTtl(ttlMs);
    this.#nodes.set(nodeId, { advertiseAddr, expiresAtMs: this.#clock.nowMs() + ttl });
  }

  async deregister(nodeId: string): Promise<void> {
    this.#nodes.delete(nodeId);
  }

  async lookup(nodeId: string): Promise<string | null> {
    const entry = this.#nodes.get(nodeId);
    if (entry === undefined) return null;
    if (this.#clock.nowMs() >= entry.expiresAtMs) {
      this.#nodes.delete(nodeId);
      return null;
    }
    return entry.advertiseAddr;
  }

  async liveNodes(): Promise<readonly LiveNode[]> {
    const now = this.#clock.nowMs();
    return [...this.#nodes]
      .filter(([, entry]) => now < entry.expiresAtMs)
      .map(([nodeId, entry]) => ({ nodeId, advertiseAddr: entry.advertiseAddr }));
  }

  /** A no-op: the instance is shared, so one host closing must not drop the others' entries. */
  async close(): Promise<void> {}
}
