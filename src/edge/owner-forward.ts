/**
 * Sending a call on to the room's owner, for both room kinds' edges. The host may answer a
 * remembered route (src/cell/route-cache.ts); when the node it names refuses the call as not
 * the owner (nothing was executed there), cannot be reached or does not answer in time, the
 * route is forgotten, and a refusal on a remembered route runs the call once more from the
 * start (the host then asks Redis, and may find the room live here). Any other answer is
 * the owner's.
 */
import type { CellKey } from '../cell/lease.js';
import { AppError } from '../shared/errors.js';

/** Answers that say the route may be stale (the owner moved, died or paused). */
const FORGET_ROUTE_ON = new Set(['NOT_OWNER_NODE', 'OWNER_UNREACHABLE', 'DEADLINE_EXCEEDED']);

export async function toOwner<R>(
  host: { forgetRoute(key: CellKey): void },
  key: CellKey,
  route: { readonly cached?: true },
  send: () => Promise<R>,
  /** The call from the start; null when it already ran once on a stale remembered route. */
  again: (() => Promise<R>) | null,
): Promise<R> {
  try {
    return await send();
  } catch (error) {
    const code = error instanceof AppError ? error.code : null;
    if (!code || !FORGET_ROUTE_ON.has(code)) throw error;
    host.forgetRoute(key);
    if (again && route.cached && code === 'NOT_OWNER_NODE') return again();
    throw error;
  }
}
