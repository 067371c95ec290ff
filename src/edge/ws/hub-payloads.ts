/** Payload helpers of the WebSocket hub: replay positions, the end-of-follows marker, text. */
import { END_FOLLOWS } from '../../realtime/frames.js';
import type { ReplayFrom } from '../../realtime/frame-replay.js';
import { wsErrors } from './protocol.js';

/** An event id as the outbox makes them (a UUID), or any short printable id. */
const EVENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** `since_event_id` (a string) or `since_version` (a JSON integer ≥ 0), or neither. */
export function replayFromOf(data: Readonly<Record<string, unknown>>): ReplayFrom | null {
  const { since_event_id: eventId, since_version: version } = data;
  if (eventId !== undefined) {
    if (typeof eventId !== 'string' || !EVENT_ID.test(eventId)) {
      throw wsErrors.badRequest('since_event_id');
    }
    return { eventId };
  }
  if (version !== undefined) {
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
      throw wsErrors.badRequest('since_version');
    }
    return { version };
  }
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
