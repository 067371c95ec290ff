/**
 * Where a node without the cells role (an edge) sends a room's call. It never loads a cell;
 * every call goes over gRPC to a cells node, sent as a gateway's call (not marked forwarded),
 * so the cells node that receives it may forward it once more to the owner:
 *
 * - a configured room-service address (the cells tier's internal load balancer), or else
 * - the room's owner by its Redis lease, or else (nobody owns it, the owner is not
 *   registered, or the call names no room) any live cells node from the registry.
 */
import { errors } from '../shared/error-codes.js';
import { routeKey, type CellKey, type LeaseManager, type NodeRegistry } from './lease.js';

export interface CellsTier {
  /** The gRPC address for a call on `key` (null: the call names no room yet). */
  addressFor(key: CellKey | null): Promise<string>;
}

export function cellsTier(deps: {
  /** `ROOMS_CELLS_ADDR`; null: the lease and the registry decide. */
  readonly fixedAddr: string | null;
  readonly lease: LeaseManager;
  readonly registry: NodeRegistry;
  /** [0, 1): which live node takes a room nobody owns (default Math.random). */
  readonly random?: () => number;
}): CellsTier {
  const { fixedAddr, lease, registry, random = Math.random } = deps;
  if (fixedAddr) return { addressFor: () => Promise.resolve(fixedAddr) };
  const anyLiveNode = async () => {
    const nodes = await registry.liveNodes().catch(unreachable);
    if (nodes.length === 0) throw errors.OWNER_UNREACHABLE('no cells node is registered');
    return nodes[Math.floor(random() * nodes.length)]!.advertiseAddr;
  };
  return {
    async addressFor(key) {
      if (!key) return anyLiveNode();
      const owner = await lease.ownerOf(routeKey(key)).catch(unreachable);
      const addr = owner ? await registry.lookup(owner).catch(unreachable) : null;
      return addr ?? anyLiveNode();
    },
  };
}

/** Redis down: the caller is told to retry (`unavailable`), the cause is kept for the log. */
function unreachable(cause: unknown): never {
  throw errors.OWNER_UNREACHABLE.withCause(cause, 'the owner route cannot be read');
}
