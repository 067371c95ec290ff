/**
 * {@link RoomFrameLog} on SQL: the room's outbox rows after the client's event (or version),
 * by the room_outbox_room_order index (app, room, version), then the row id within a
 * version. Retention does not delete oldest first (a dead letter outlives the delivered rows
 * around it), so a kept anchor row proves nothing by itself: the replay is served only when
 * the anchor lies above the room's pruned mark (./outbox-pruned.ts), i.e. no row after it
 * was ever deleted. A version with no row at all is no hole: its command sent no event.
 */
import type { Kysely } from 'kysely';
import { parseEnvelope } from '../../cell/envelope.js';
import type { RoomFrameLog } from '../../realtime/frame-replay.js';
import { prunedUpTo } from './outbox-pruned.js';
import type { Database } from './schema.js';

export function sqlRoomFrameLog(db: Kysely<Database>): RoomFrameLog {
  return {
    async after(key, from, limit) {
      const room = db
        .selectFrom('room_outbox')
        .select(['id', 'room_version', 'event_id'])
        .where('app_code', '=', key.appCode)
        .where('room_id', '=', key.roomId);
      const anchor = await (
        'eventId' in from
          ? room.where('event_id', '=', from.eventId)
          : room
              .where('room_version', '<=', from.version)
              .orderBy('room_version', 'desc')
              .orderBy('id', 'desc')
              .limit(1)
      ).executeTakeFirst();
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
      // Read after the rows: retention raises the mark before it deletes, so a deletion
      // that could have cost this read a row is seen here.
      const pruned = await prunedUpTo(db, key);
      if (pruned !== null && pruned >= version) return null;
      return {
        kind: cell.kind,
        anchor: { roomVersion: version, eventId: anchor.event_id },
        envelopes: rows.map((r) => parseEnvelope(String(r.envelope))),
      };
    },
  };
}
