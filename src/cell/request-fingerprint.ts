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
import { hash } from 'node:crypto';

/**
 * Fields that are not what the request asks: its id, and the target of a media move, which
 * each node running the move picks for itself (where a new room would go at that moment)
 * under the one request id of that move (src/media-cluster/media-failover.ts).
 */
const NOT_PART_OF_THE_REQUEST = new Set(['request_id', 'to_server']);

/**
 * Secrets are not kept, not even as a fast digest that could be searched offline: only
 * whether one was sent counts (so a join retried with another password is the same join).
 */
const SECRET = new Set(['password']);

/**
 * A short, stable digest of `operation` and `request`. The request's own fields may come in
 * any order; what they hold is taken as JSON gives it (a parsed request's nested objects come
 * in its schema's order, and a list's order is part of what it asks).
 */
export function requestFingerprint(operation: string, request: unknown): string {
  let text = `${JSON.stringify(operation)}\n`;
  if (request !== null && typeof request === 'object' && !Array.isArray(request)) {
    const fields = request as Record<string, unknown>;
    for (const name of Object.keys(fields).sort()) {
      const value = fields[name];
      if (value === undefined || NOT_PART_OF_THE_REQUEST.has(name)) continue;
      text += `${JSON.stringify(name)}:${SECRET.has(name) ? '"*"' : JSON.stringify(value)}\n`;
    }
  } else {
    text += JSON.stringify(request) ?? 'null';
  }
  return hash('sha256', text, 'base64url').slice(0, 22);
}
