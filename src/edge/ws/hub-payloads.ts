/** Payload helpers of the WebSocket hub: replay positions, the end-of-follows marker, text. */
import { END_FOLLOWS } from '../../realtime/frames.js';
import type { ReplayFrom } from '../../realtime/frame-replay.js';

/**
 * Where a replay starts: `since_event_id`, else `since_version`, else nowhere (both already
 * checked by `room.subscribe`'s declared payload, ./hub-events.ts).
 */
export function replayFromOf(data: {
  readonly since_event_id?: string | undefined;
  readonly since_version?: number | undefined;
}): ReplayFrom | null {
  if (data.since_event_id !== undefined) return { eventId: data.since_event_id };
  if (data.since_version !== undefined) return { version: data.since_version };
  return null;
}

const END_FOLLOWS_BYTES = Buffer.from(END_FOLLOWS);

export function isEndOfFollows(payload: Buffer): boolean {
  return payload.length === END_FOLLOWS_BYTES.length && payload.equals(END_FOLLOWS_BYTES);
}

/** A text message's payload as a string (ws hands over a Buffer, or fragments). */
export function textOf(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.from(new Uint8Array(data)).toString('utf8');
}
