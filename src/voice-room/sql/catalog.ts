/** The per-app gift catalog and the lobby list, read and written outside any cell. */
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../adapters/sql/flavor.js';
import type { Gift, LobbyEntry } from '../api/voice-store.js';
import type { Database } from '../../adapters/sql/schema.js';
import { errors } from '../../shared/error-codes.js';
import { exactAmount, exactly } from './amounts.js';

export async function listGifts(db: Kysely<Database>, appCode: string): Promise<Gift[]> {
  const rows = await db
    .selectFrom('gift_catalog')
    .select(['gift_id', 'name', exactly('price').as('price'), 'active'])
    .where('app_code', '=', appCode)
    .orderBy('gift_id')
    .execute();
  return rows.map((r) => ({
    gift_id: r.gift_id,
    name: r.name,
    price: exactAmount(r.price, `price of gift ${r.gift_id}`),
    active: Boolean(Number(r.active)),
  }));
}

export async function findGift(
  db: Kysely<Database>,
  appCode: string,
  giftId: string,
): Promise<Gift | null> {
  const gifts = await db
    .selectFrom('gift_catalog')
    .select(['gift_id', 'name', exactly('price').as('price'), 'active'])
    .where('app_code', '=', appCode)
    .where('gift_id', '=', giftId)
    .execute();
  const r = gifts[0];
  return r
    ? {
        gift_id: r.gift_id,
        name: r.name,
        price: exactAmount(r.price, `price of gift ${r.gift_id}`),
        active: Boolean(Number(r.active)),
      }
    : null;
}

export async function putGift(
  db: Kysely<Database>,
  appCode: string,
  gift: Gift,
  nowMs: number,
): Promise<Gift> {
  if (!Number.isSafeInteger(gift.price) || gift.price < 0) {
    throw errors.INVALID_ARGUMENT('price must be a non-negative integer');
  }
  const values = {
    name: gift.name,
    price: gift.price,
    active: gift.active ? 1 : 0,
    updated_at_ms: nowMs,
  };
  const updated = await db
    .updateTable('gift_catalog')
    .set(values)
    .where('app_code', '=', appCode)
    .where('gift_id', '=', gift.gift_id)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) {
    try {
      await db
        .insertInto('gift_catalog')
        .values({ app_code: appCode, gift_id: gift.gift_id, ...values })
        .execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return putGift(db, appCode, gift, nowMs);
    }
  }
  return gift;
}

/** Active rooms, busiest first; `cursor` is the previous page's last position. */
export async function listLobby(
  db: Kysely<Database>,
  appCode: string,
  limit: number,
  offset: number,
): Promise<{ list: LobbyEntry[]; has_more: boolean }> {
  const rows = await db
    .selectFrom('room_list_entries')
    .select(['room_id', 'title', 'owner_user_id', 'online_count', 'mic_count', 'created_at_ms'])
    .where('app_code', '=', appCode)
    .where('status', '=', 'active')
    .orderBy('online_count', 'desc')
    .orderBy('created_at_ms', 'desc')
    .orderBy('room_id')
    .limit(limit + 1)
    .offset(offset)
    .execute();
  return {
    list: rows.slice(0, limit).map((r) => ({
      ...r,
      online_count: Number(r.online_count),
      mic_count: Number(r.mic_count),
      created_at_ms: Number(r.created_at_ms),
    })),
    has_more: rows.length > limit,
  };
}
