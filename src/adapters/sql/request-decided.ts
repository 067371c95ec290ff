/** Whether a room already recorded an outcome for a request id (its retry is not new). */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export async function requestDecided(
  db: Kysely<Database>,
  appCode: string,
  roomId: string,
  requestId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('room_request_outcomes')
    .select('request_id')
    .where('app_code', '=', appCode)
    .where('room_id', '=', roomId)
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  return row !== undefined;
}
