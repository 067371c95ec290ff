/**
 * {@link EndedRooms} on SQL: meetings by the meeting_rooms_code unique key (`status = 2`),
 * voice rooms by the rooms primary key (`status = 'closed'`); one query per kind per
 * question (the janitor asks in chunks of at most a few hundred rooms).
 */
import type { Kysely } from 'kysely';
import type { EndedRooms, MediaRoom } from '../../media-cluster/router-janitor.js';
import type { Database } from './schema.js';

export function sqlEndedRooms(db: Kysely<Database>): EndedRooms {
  return {
    async endedAmong(rooms: readonly MediaRoom[]): Promise<MediaRoom[]> {
      const of = (kind: MediaRoom['kind']) => rooms.filter((r) => r.kind === kind);
      const meetings = of('meeting');
      const voice = of('voice_room');
      const ended: MediaRoom[] = [];
      if (meetings.length > 0) {
        const rows = await db
          .selectFrom('meeting_rooms')
          .select(['app_code', 'room_code'])
          .where('status', '=', 2)
          .where((eb) =>
            eb.or(
              meetings.map(({ key }) =>
                eb.and([eb('app_code', '=', key.appCode), eb('room_code', '=', key.roomId)]),
              ),
            ),
          )
          .execute();
        for (const r of rows) {
          ended.push({ kind: 'meeting', key: { appCode: r.app_code, roomId: r.room_code } });
        }
      }
      if (voice.length > 0) {
        const rows = await db
          .selectFrom('rooms')
          .select(['app_code', 'room_id'])
          .where('status', '=', 'closed')
          .where((eb) =>
            eb.or(
              voice.map(({ key }) =>
                eb.and([eb('app_code', '=', key.appCode), eb('room_id', '=', key.roomId)]),
              ),
            ),
          )
          .execute();
        for (const r of rows) {
          ended.push({ kind: 'voice_room', key: { appCode: r.app_code, roomId: r.room_id } });
        }
      }
      return ended;
    },
  };
}
