/**
 * Whether a failed call may succeed when made again later: one list for every part of the
 * client (a room's resubscription, a media join, a consumer, a page's recovery).
 */

/**
 * Reasons that say "try again": the server's `unavailable` kind (docs/errors.md), the media
 * server's during a failover, and the socket's own (no ACK, a drop, not open yet).
 */
const TRANSIENT_REASONS: ReadonlySet<string> = new Set([
  'TIMEOUT',
  'DISCONNECTED',
  'NOT_CONNECTED',
  'CELL_FENCED',
  'COMMIT_FAILED',
  'DEADLINE_EXCEEDED',
  'NOT_OWNER_NODE',
  'OWNER_UNREACHABLE',
  'OWNER_TIMEOUT',
  'NODE_DRAINING',
  'NODE_BUSY',
  'DATABASE_UNAVAILABLE',
  'DATABASE_LOCK_CONFLICT',
  'BUSY',
  'RATE_LIMIT_UNAVAILABLE',
  'KEY_VALUE_UNAVAILABLE',
  'REALTIME_UNAVAILABLE',
  'MEDIA_SERVER_ERROR',
  'MEDIA_NO_WORKER',
  'MEDIA_STATE_UNAVAILABLE',
  // The user's media through a socket that is gone (a reconnect whose old socket's close
  // is still on its way, on another node) is released by that close, or at its missed ping.
  'MEDIA_USER_LIMIT',
]);

/**
 * By the error's fields, not its class (any socket or client shaped like ours may be used): a
 * REST failure (a `status`) with no answer or a 502-504, or a refusal whose `reason` is above.
 */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { status, reason } = error as Error & { status?: unknown; reason?: unknown };
  if (typeof status === 'number' && (status === 0 || status >= 502)) return true;
  return typeof reason === 'string' && TRANSIENT_REASONS.has(reason);
}
