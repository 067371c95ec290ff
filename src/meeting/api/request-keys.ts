/**
 * The keys a meeting request is known by: in the cell (its request id, scoped to the caller)
 * and outside it (a create's code claim, an invite's notifications).
 */
import { randomUUID } from 'node:crypto';
import type { MeetingRequest } from './declaration.js';

/** The cell's request id: the caller's own, scoped to the caller (another user's is not theirs). */
export function cellRequestId(
  req: Pick<MeetingRequest, 'caller_id' | 'request_id'>,
): string | undefined {
  return req.request_id === undefined ? undefined : `${req.caller_id}:${req.request_id}`;
}

/**
 * The key of a request sent without an id, for what must be keyed outside the cell (a
 * create's code claim, an invite's notifications): nothing can name it again.
 */
export function onceKey(req: MeetingRequest): string {
  return `${req.caller_id}:once:${randomUUID()}`;
}
