/**
 * {@link RoomFrameLog} on SQL: the room's outbox rows after the client's event, by the
 * room_outbox_room_order index (app, room, version), then the row id within a version.
 */
import type { Kysely } from 'kysely';
import { parseEnvelope } from '../../cell/envelope.js';
import type { RoomFrameLog } from '../../realtime/frame-replay.js';
import type { Database } from './schema.js';

export function sqlRoomFrameLog(db: Kysely<Database>): RoomFrameLog {
  return {
    async after(key, eventId, limit) {
      const anchor = await db
        .selectFrom('room_outbox')
        .select(['id', 'room_version'])
        .where('event_id', '=', eventId)
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .executeTakeFirst();
      if (!anchor) return null;
      const cell = await db
        .selectFrom('room_cells')
        .select('kind')
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .executeTakeFirst();
      if (!cell) return null;
      const version = Number(anchor.room_version);
      const rows = await db
        .selectFrom('room_outbox')
        .select('envelope')
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId)
        .where((eb) =>
          eb.or([
            eb('room_version', '>', version),
            eb.and([eb('room_version', '=', version), eb('id', '>', anchor.id)]),
          ]),
        )
        .orderBy('room_version')
        .orderBy('id')
        .limit(limit)
        .execute();
      return {
        kind: cell.kind,
        anchor: { roomVersion: version, eventId },
        envelopes: rows.map((r) => parseEnvelope(String(r.envelope))),
      };
    },
  };
}
