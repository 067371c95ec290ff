/**
 * Ports of the lease (which node executes a room) and of the node registry (where a node
 * can be reached). Redis only holds the hot route; SQL (lease_epoch) is the real fence.
 */

/** Identifies one room of one app. */
export interface CellKey {
  readonly appCode: string;
  readonly roomId: string;
}

/** The route key the seed fixes: `app_code + "\0" + room_id`, also for the default app. */
export function routeKey(key: CellKey): string {
  return `${key.appCode}\u0000${key.roomId}`;
}

export type EnsureOwnerResult =
  | { readonly granted: true; readonly token: string }
  | { readonly granted: false; readonly ownerNodeId: string };

/** A renewal: the new token, or who holds the route now (null: nobody, the key is gone). */
export type RenewResult =
  | { readonly renewed: true; readonly token: string }
  | { readonly renewed: false; readonly ownerNodeId: string | null };

export interface LeaseManager {
  /**
   * Grants the lease to `nodeId` when the route is unowned or expired, or renews it when
   * `nodeId` already holds it; every grant or renewal carries a NEW token. Owned by another
   * node: returns that node's id. Atomic.
   */
  ensureOwner(route: string, nodeId: string, ttlMs: number): Promise<EnsureOwnerResult>;
  /**
   * Compare-and-extend: only while `token` is the route's current token, replaces it with a
   * NEW token (the seed: a renewal carries a new token) and restarts the TTL. A route whose
   * key is gone is NOT granted again: whoever held `token` may have lost the room to another
   * node meanwhile (which may even have released it already), so its memory proves nothing
   * and it must load the room again through {@link LeaseManager.ensureOwner}. Atomic.
   */
  renew(route: string, token: string, ttlMs: number): Promise<RenewResult>;
  /** True only while `token` is the current token of the route. Atomic. */
  verifyOwner(route: string, token: string): Promise<boolean>;
  /** Compare-and-delete: frees the route only if `token` is still current. */
  release(route: string, token: string): Promise<boolean>;
  /** The current owner's node id, if any (for forwarding). */
  ownerOf(route: string): Promise<string | null>;
  close(): Promise<void>;
}

/**
 * Rejects what Redis `PX` would reject, rounding up so a fractional TTL never shortens a lease.
 * Every lease and registry adapter checks with this, so they accept the same TTLs.
 */
export function checkTtl(ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`ttlMs must be a positive finite number, got ${ttlMs}`);
  }
  return Math.ceil(ttlMs);
}

export interface NodeRegistry {
  /** Writes `room:node:{node_id}` → advertise address with a TTL; call again to refresh. */
  register(nodeId: string, advertiseAddr: string, ttlMs: number): Promise<void>;
  /** Removes the node's entry (on drain). */
  deregister(nodeId: string): Promise<void>;
  /** The advertise address of a live node, or null when unknown or expired. */
  lookup(nodeId: string): Promise<string | null>;
  /**
   * Every live node and its address, in no particular order: where a node without the cells
   * role sends a room nobody owns yet.
   */
  liveNodes(): Promise<readonly LiveNode[]>;
  close(): Promise<void>;
}

export interface LiveNode {
  readonly nodeId: string;
  readonly advertiseAddr: string;
}
