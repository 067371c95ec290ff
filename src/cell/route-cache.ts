/**
 * Where rooms owned by other nodes live, as this node last learnt it (the lease's owner and
 * its advertised address), kept for a short time so that a stream of calls for a room
 * owned elsewhere does not ask Redis twice per call (EnsureOwner, then the address). A
 * stale entry is harmless: the node it names refuses a forwarded call for a room it does
 * not own (NOT_OWNER_NODE, nothing executed) or cannot be reached, and the caller then
 * forgets the entry and asks again. Bounded: the oldest entries go first.
 *
 * The nodes' addresses are remembered as long, by node: a room whose route expired costs
 * one Redis round trip (EnsureOwner names the owner) instead of two, since its owner's
 * address is usually known from another room's route. Forgetting a route forgets its
 * node's address too (the node may have moved or died).
 */
export interface CachedRoute {
  readonly nodeId: string;
  readonly addr: string;
}

const MAX_ENTRIES = 10_000;

export class RouteCache {
  private readonly routes = new Map<string, CachedRoute & { readonly until: number }>();
  private readonly addrs = new Map<string, { readonly addr: string; readonly until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(route: string): CachedRoute | null {
    const entry = this.#fresh(this.routes, route);
    return entry ? { nodeId: entry.nodeId, addr: entry.addr } : null;
  }

  set(route: string, value: CachedRoute): void {
    if (this.ttlMs <= 0) return;
    this.routes.delete(route);
    if (this.routes.size >= MAX_ENTRIES) {
      const oldest = this.routes.keys().next();
      if (!oldest.done) this.routes.delete(oldest.value);
    }
    const until = this.now() + this.ttlMs;
    this.routes.set(route, { ...value, until });
    // As many as there are nodes: a handful, and replaced as they come.
    this.addrs.set(value.nodeId, { addr: value.addr, until });
  }

  /** The address of node `nodeId` as a route recently named it, or null. */
  addrOf(nodeId: string): string | null {
    return this.#fresh(this.addrs, nodeId)?.addr ?? null;
  }

  forget(route: string): void {
    const entry = this.routes.get(route);
    this.routes.delete(route);
    if (entry) this.addrs.delete(entry.nodeId);
  }

  get size(): number {
    return this.routes.size;
  }

  /** The entry while its time is not up; an expired one is dropped. */
  #fresh<V extends { readonly until: number }>(map: Map<string, V>, key: string): V | null {
    const entry = map.get(key);
    if (!entry) return null;
    if (entry.until > this.now()) return entry;
    map.delete(key);
    return null;
  }
}
