/**
 * The envelope of one room event: built once, here, by the cell's commit; written as is to
 * `room_outbox.envelope`, carried by webhooks and, as an object, handed to the realtime
 * bus. A consumer deduplicates per app by `(app_code, event_id)`; `room_version` orders
 * one room's events.
 */
import type { CellKey } from './lease.js';

export interface RoomEventEnvelope {
  readonly app_code: string;
  /** Unique per event (a UUID); the same on every redelivery. */
  readonly event_id: string;
  readonly room_id: string;
  /** The room version of the command that produced the event (several events may share one). */
  readonly room_version: number;
  readonly type: string;
  readonly occurred_at_ms: number;
  readonly data: unknown;
}

/** The one constructor of an envelope (the field order is the stored JSON's). */
export function roomEventEnvelope(
  key: CellKey,
  eventId: string,
  roomVersion: number,
  event: { readonly type: string; readonly data: unknown },
  occurredAtMs: number,
): RoomEventEnvelope {
  return {
    app_code: key.appCode,
    event_id: eventId,
    room_id: key.roomId,
    room_version: roomVersion,
    type: event.type,
    occurred_at_ms: occurredAtMs,
    data: event.data,
  };
}

/** Parses a stored envelope; throws on anything that is not one. */
export function parseEnvelope(json: string): RoomEventEnvelope {
  const value = JSON.parse(json) as Partial<RoomEventEnvelope> | null;
  if (
    !value ||
    typeof value.app_code !== 'string' ||
    typeof value.event_id !== 'string' ||
    typeof value.room_id !== 'string' ||
    typeof value.room_version !== 'number' ||
    typeof value.type !== 'string' ||
    typeof value.occurred_at_ms !== 'number'
  ) {
    throw new Error('not a room event envelope');
  }
  return value as RoomEventEnvelope;
}
