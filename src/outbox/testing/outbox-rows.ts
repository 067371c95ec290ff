/** Test-only: outbox rows written directly, the way a cell commit writes them. */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../adapters/sql/schema.js';
import { pendingOutboxRow } from '../../adapters/sql/batch-statements.js';

export interface TestEvent {
  readonly appCode?: string;
  readonly roomId: string;
  readonly version: number;
  readonly type?: string;
  /** The envelope's `data` besides `version`. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** Inserts the events in the given order (ids ascending) and returns their event ids. */
export async function insertEvents(
  db: Kysely<Database>,
  events: readonly TestEvent[],
  nowMs = Date.now(),
): Promise<string[]> {
  const rows = events.map((e) => {
    const eventId = randomUUID();
    const appCode = e.appCode ?? 'default';
    const type = e.type ?? 'Added';
    return {
      event_id: eventId,
      app_code: appCode,
      room_id: e.roomId,
      room_version: e.version,
      event_type: type,
      envelope: JSON.stringify({
        app_code: appCode,
        event_id: eventId,
        room_id: e.roomId,
        room_version: e.version,
        type,
        occurred_at_ms: nowMs,
        data: { version: e.version, ...e.data },
      }),
      ...pendingOutboxRow(nowMs),
    };
  });
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('room_outbox')
      .values(rows.slice(i, i + 500))
      .execute();
  }
  return rows.map((r) => r.event_id);
}

/** `count` events per room for `rooms` rooms, interleaved like concurrent rooms commit. */
export function interleavedRooms(rooms: number, count: number, prefix: string): TestEvent[] {
  const out: TestEvent[] = [];
  for (let v = 1; v <= count; v++) {
    for (let r = 0; r < rooms; r++) out.push({ roomId: `${prefix}-${r}`, version: v });
  }
  return out;
}

export async function rowOf(db: Kysely<Database>, eventId: string) {
  return db
    .selectFrom('room_outbox')
    .selectAll()
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();
}
