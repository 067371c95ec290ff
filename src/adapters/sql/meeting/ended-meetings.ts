/**
 * {@link EndedMeetings} on SQL: one lookup by the meeting_rooms_code unique key per
 * question (the janitor asks in chunks of at most a few hundred meetings).
 */
import type { Kysely } from 'kysely';
import type { CellKey } from '../../../cell/lease.js';
import type { EndedMeetings } from '../../../meeting/router-janitor.js';
import type { Database } from '../schema.js';

export function sqlEndedMeetings(db: Kysely<Database>): EndedMeetings {
  return {
    async endedAmong(meetings: readonly CellKey[]): Promise<CellKey[]> {
      if (meetings.length === 0) return [];
      const rows = await db
        .selectFrom('meeting_rooms')
        .select(['app_code', 'room_code'])
        .where('status', '=', 2)
        .where((eb) =>
          eb.or(
            meetings.map((m) =>
              eb.and([eb('app_code', '=', m.appCode), eb('room_code', '=', m.roomId)]),
            ),
          ),
        )
        .execute();
      return rows.map((r) => ({ appCode: r.app_code, roomId: r.room_code }));
    },
  };
}
