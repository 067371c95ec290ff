/* eslint-disable @typescript-eslint/require-await -- async so that a thrown check becomes a
   rejection, exactly as with the Redis adapter; the work itself is deliberately synchronous. */
import { randomUUID } from 'node:crypto';
import {
  checkTtl,
  type EnsureOwnerResult,
  type LeaseManager,
  type RenewResult,
} from '../../cell/lease.js';
import type { Clock } from '../../shared/clock.js';

interface Lease {
  readonly nodeId: string;
  readonly token: string;
  readonly expiresAtMs: number;
}

/** Expired leases of rooms nobody touches again would otherwise stay in the map forever. */
const SWEEP_EVERY_WRITES = 1024;

/**
 * In-process {@link LeaseManager} with TTLs measured on an injected {@link Clock}. Several hosts
 * in one process share one instance (embedded mode, tests), which is what makes it a lease.
 * Every method runs synchronously before its first await, so each is atomic like the Redis one.
 */
export class MemoryLeaseManager implements LeaseManager {
  readonly #clock: Clock;
  readonly #leases = new Map<string, Lease>();
  #writesSinceSweep = 0;

  constructor({ clock }: { clock: Clock }) {
    this.#clock = clock;
  }

  async ensureOwner(route: string, nodeId: string, ttlMs: number): Promise<EnsureOwnerResult> {
    const ttl = checkTtl(ttlMs);
    // Same rule as the Redis adapter, which stores `nodeId\ntoken`, so both accept the same ids.
    if (nodeId.includes('\n')) throw new RangeError('nodeId must not contain a newline');
    const current = this.#live(route);
    if (current && current.nodeId !== nodeId) {
      return { granted: false, ownerNodeId: current.nodeId };
    }
    const token = randomUUID();
    this.#leases.set(route, { nodeId, token, expiresAtMs: this.#clock.nowMs() + ttl });
    this.#maybeSweep();
    return { granted: true, token };
  }

  async renew(route: string, token: string, ttlMs: number): Promise<RenewResult> {
    const ttl = checkTtl(ttlMs);
    const current = this.#live(route);
    if (current?.token !== token) return { renewed: false, ownerNodeId: current?.nodeId ?? null };
    const next = randomUUID();
    this.#leases.set(route, {
      nodeId: current.nodeId,
      token: next,
      expiresAtMs: this.#clock.nowMs() + ttl,
    });
    return { renewed: true, token: next };
  }

  async verifyOwner(route: string, token: string): Promise<boolean> {
    return this.#live(route)?.token === token;
  }

  async release(route: string, token: string): Promise<boolean> {
    if (this.#live(route)?.token !== token) return false;
    return this.#leases.delete(route);
  }

  async ownerOf(route: string): Promise<string | null> {
    return this.#live(route)?.nodeId ?? null;
  }

  /** A no-op: the instance is shared, so one host closing must not drop the others' leases. */
  async close(): Promise<void> {}

  #live(route: string): Lease | undefined {
    const lease = this.#leases.get(route);
    if (lease === undefined) return undefined;
    // `>=` mirrors Redis PX: the key is gone once the full TTL has elapsed.
    if (this.#clock.nowMs() >= lease.expiresAtMs) {
      this.#leases.delete(route);
      return undefined;
    }
    return lease;
  }

  #maybeSweep(): void {
    if (++this.#writesSinceSweep < SWEEP_EVERY_WRITES) return;
    this.#writesSinceSweep = 0;
    const now = this.#clock.nowMs();
    for (const [route, lease] of this.#leases) {
      if (now >= lease.expiresAtMs) this.#leases.delete(route);
    }
  }
}
