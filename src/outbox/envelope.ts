/**
 * The envelope of one room event, as the cell commit writes it to `room_outbox.envelope`
 * and as webhooks and the realtime bus carry it. A consumer deduplicates per app by
 * `(app_code, event_id)`; `room_version` orders one room's events.
 */
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
