/** What the room-creation quota reads from the `rooms` projection (written in each commit). */
import type { Kysely } from 'kysely';
import type { Database } from '../../adapters/sql/schema.js';

/** Rooms of `ownerUserId` in `appCode` that are not closed (`creating` or `active`). */
export async function countOpenRooms(
  db: Kysely<Database>,
  appCode: string,
  ownerUserId: string,
): Promise<number> {
  const row = await db
    .selectFrom('rooms')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('app_code', '=', appCode)
    .where('owner_user_id', '=', ownerUserId)
    .where('status', '!=', 'closed')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Whether the room exists (in any status): a creation retried after it committed. */
export async function roomExists(
  db: Kysely<Database>,
  appCode: string,
  roomId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('rooms')
    .select('room_id')
    .where('app_code', '=', appCode)
    .where('room_id', '=', roomId)
    .executeTakeFirst();
  return row !== undefined;
}
