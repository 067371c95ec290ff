/**
 * Sending a call on to the room's owner, for both room kinds' edges. The host may answer a
 * remembered route (src/cell/route-cache.ts); when the node it names refuses the call as not
 * the owner (nothing was executed there), cannot be reached or does not answer in time, the
 * route is forgotten. A remembered route that was refused or unreachable runs the call once
 * more from the start (the host then asks Redis, and may find the room live here or on the
 * node that took over from a dead owner); a command run twice that way is still decided
 * once, by its request id. A command without a request id is run again only where nothing
 * ran (`NOT_OWNER_NODE`): an owner that could not be reached may have committed it. A call
 * out of time is not run again. Any other answer is the owner's.
 */
import type { Routed } from '../cell/host.js';
import type { CellKey } from '../cell/lease.js';
import { AppError } from '../shared/errors.js';

export type RemoteRoute = Extract<Routed<unknown>, { kind: 'remote' }>;

/**
 * Thrown by a handler's `execute` or `query` when the room's owner is another node: the API
 * catches it and sends the whole call there, whose answer is the call's. Nothing of the
 * handler after that point runs here, so no handler can mistake the owner's answer for the
 * result of one of its steps.
 */
export class OwnerElsewhere extends Error {
  constructor(
    readonly route: RemoteRoute,
    /** The room, as the handler named it to the host. */
    readonly key: CellKey,
  ) {
    super(`the room is owned by ${route.nodeId}`);
  }
}

/** Answers that say the route may be stale (the owner moved, died or paused). */
const FORGET_ROUTE_ON = new Set([
  'NOT_OWNER_NODE',
  'OWNER_UNREACHABLE',
  'OWNER_TIMEOUT',
  'DEADLINE_EXCEEDED',
]);
/** Of those, the answers after which the call's time is gone: never run again. */
const OUT_OF_TIME = new Set(['OWNER_TIMEOUT', 'DEADLINE_EXCEEDED']);
/** The answer that says nothing of the call ran. */
const NOTHING_RAN = 'NOT_OWNER_NODE';

export async function toOwner<R>(
  host: { forgetRoute(key: CellKey): void },
  key: CellKey,
  route: { readonly cached?: true },
  send: () => Promise<R>,
  /** The call from the start; null when it already ran once on a stale remembered route. */
  again: (() => Promise<R>) | null,
  /** The call is a command without a request id: a second run would not be recognised. */
  unkeyed = false,
): Promise<R> {
  try {
    return await send();
  } catch (error) {
    const code = error instanceof AppError ? error.code : null;
    if (!code || !FORGET_ROUTE_ON.has(code)) throw error;
    host.forgetRoute(key);
    const safe = !unkeyed || code === NOTHING_RAN;
    if (again && route.cached && safe && !OUT_OF_TIME.has(code)) return again();
    throw error;
  }
}
