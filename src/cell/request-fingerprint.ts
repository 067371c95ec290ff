/**
 * What a request id names: one operation with one body. The cell records this fingerprint
 * beside a request id's first outcome, so that the same id sent again with another
 * operation or another body is refused (`REQUEST_ID_REUSED`) instead of answered with the
 * first request's result.
 *
 * The edges fingerprint what the caller sent (the operation and its parsed request), not
 * the command they build from it: a command may carry what the edge derived (a password's
 * salted hash, the media server placed at that moment), which differs between two copies
 * of one request.
 */
import { createHash } from 'node:crypto';

/**
 * Fields that are not what the request asks: its id, and the target of a media move, which
 * each node running the move picks for itself (where a new room would go at that moment)
 * under the one request id of that move (src/meeting/media-failover.ts).
 */
const NOT_PART_OF_THE_REQUEST = new Set(['request_id', 'to_server']);

/**
 * Secrets are not kept, not even as a fast digest that could be searched offline: only
 * whether one was sent counts (so a join retried with another password is the same join).
 */
const SECRET = new Set(['password']);

/** A short, stable digest of `operation` and `request` (keys in any order give one value). */
export function requestFingerprint(operation: string, request: unknown): string {
  return createHash('sha256')
    .update(operation)
    .update('\n')
    .update(canonicalJson(request, true))
    .digest('base64url')
    .slice(0, 22);
}

/** JSON with object keys sorted at every depth; `undefined` members are left out, as JSON does. */
function canonicalJson(value: unknown, top = false): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .filter((k) => !(top && NOT_PART_OF_THE_REQUEST.has(k)))
      .sort()
      .flatMap((k) => {
        const v = (value as Record<string, unknown>)[k];
        if (v === undefined) return [];
        return [`${JSON.stringify(k)}:${SECRET.has(k) ? '"*"' : canonicalJson(v)}`];
      });
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
