/**
 * Where rooms owned by other nodes live, as this node last learnt it (the lease's owner and
 * its advertised address), kept for a short time so that a stream of calls for a room
 * owned elsewhere does not ask Redis twice per call (EnsureOwner, then the address). A
 * stale entry is harmless: the node it names refuses a forwarded call for a room it does
 * not own (NOT_OWNER_NODE, nothing executed) or cannot be reached, and the caller then
 * forgets the entry and asks again. Bounded: the oldest entries go first.
 */
export interface CachedRoute {
  readonly nodeId: string;
  readonly addr: string;
}

const MAX_ENTRIES = 10_000;

export class RouteCache {
  private readonly routes = new Map<string, CachedRoute & { readonly until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(route: string): CachedRoute | null {
    const entry = this.routes.get(route);
    if (!entry) return null;
    if (entry.until <= this.now()) {
      this.routes.delete(route);
      return null;
    }
    return { nodeId: entry.nodeId, addr: entry.addr };
  }

  set(route: string, value: CachedRoute): void {
    if (this.ttlMs <= 0) return;
    this.routes.delete(route);
    if (this.routes.size >= MAX_ENTRIES) {
      const oldest = this.routes.keys().next();
      if (!oldest.done) this.routes.delete(oldest.value);
    }
    this.routes.set(route, { ...value, until: this.now() + this.ttlMs });
  }

  forget(route: string): void {
    this.routes.delete(route);
  }

  get size(): number {
    return this.routes.size;
  }
}
