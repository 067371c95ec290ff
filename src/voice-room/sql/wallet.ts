/**
 * The wallet: balances and a ledger unique per (app_code, request_id). A gift is charged
 * inside the room's commit transaction (under a savepoint), so it commits exactly when the
 * GiftSent event does; the conditional debit keeps two rooms on two nodes from
 * overdrawing one wallet.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DecidedEntry, TransactionReply } from '../../cell/domain.js';
import type { CellKey } from '../../cell/lease.js';
import { invalidArgument, refuse } from '../domain/errors.js';
import type { VoiceRoomCommand, VoiceRoomEvent } from '../domain/types.js';
import { AppError, type DomainError } from '../../shared/errors.js';
import { isUniqueViolation } from '../../adapters/sql/flavor.js';
import type { TopUpResult } from '../api/voice-store.js';
import type { Database } from '../../adapters/sql/schema.js';
import { errors } from '../../shared/error-codes.js';
import { amountOf, exactAmount, exactly } from './amounts.js';
import { addGiftToRankings, type RankingSettings } from './rankings.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The inTransaction hook of SendGift: the charge, then the rankings (./rankings.ts). */
export async function chargeGift(
  trx: Transaction<Database>,
  entry: DecidedEntry<VoiceRoomCommand, VoiceRoomEvent>,
  key: CellKey,
  nowMs: number,
  rankings: RankingSettings,
): Promise<DomainError | TransactionReply | null> {
  const gift = entry.events.find((e) => e.type === 'GiftSent');
  if (!gift) return null;
  const item = await trx
    .selectFrom('gift_catalog')
    .select([exactly('price').as('price'), 'active'])
    .where('app_code', '=', key.appCode)
    .where('gift_id', '=', gift.gift_id)
    .executeTakeFirst();
  if (!item || !Number(item.active)) return refuse('GIFT_NOT_FOUND', gift.gift_id);
  const price = amountOf(item.price);
  if (price === null) return refuse('AMOUNT_NOT_EXACT', `price of gift ${gift.gift_id}`);
  if (price !== gift.unit_price) return refuse('GIFT_PRICE_CHANGED');
  try {
    await trx
      .insertInto('wallet_ledger')
      .values({
        app_code: key.appCode,
        request_id: entry.requestId,
        kind: 'gift',
        user_id: gift.sender_user_id,
        amount: -gift.total_price,
        room_id: key.roomId,
        detail: JSON.stringify({
          gift_id: gift.gift_id,
          count: gift.count,
          unit_price: gift.unit_price,
          receiver_user_ids: gift.receiver_user_ids,
        }),
        created_at_ms: nowMs,
      })
      .execute();
  } catch (error) {
    // The same request id already charged elsewhere (another room): never charge twice.
    if (isUniqueViolation(error)) return invalidArgument('request_id already used for a charge');
    throw error;
  }
  // Each wallet row is locked by its update, and the updates run in one order for every
  // gift, user_id ascending (the key's order; the app is the room's): a gift A→B and a gift
  // B→A in two rooms then wait for each other instead of deadlocking.
  const share = gift.unit_price * gift.count;
  const moves = [
    ...(gift.total_price > 0 ? [{ userId: gift.sender_user_id, amount: -gift.total_price }] : []),
    ...(share > 0 ? gift.receiver_user_ids.map((userId) => ({ userId, amount: share })) : []),
  ].sort((a, b) => Buffer.compare(Buffer.from(a.userId), Buffer.from(b.userId)));
  for (const { userId, amount } of moves) {
    const refused =
      amount < 0
        ? await debit(trx, key.appCode, userId, -amount, nowMs)
        : await credit(trx, key.appCode, userId, amount, nowMs);
    if (refused) return refused;
  }
  // The sender's balance right after this charge: part of the gift's recorded answer, so a
  // retry answers it too, whatever the wallet holds by then.
  const balance = await storedBalance(trx, key.appCode, gift.sender_user_id);
  if (balance === null) return refuse('AMOUNT_NOT_EXACT', 'balance of the sender');
  await addGiftToRankings(trx, key, gift, nowMs, rankings);
  return { reply: { balance } };
}

/** Takes `amount` from a balance that holds it, or refuses (changing nothing). */
async function debit(
  trx: Transaction<Database>,
  appCode: string,
  userId: string,
  amount: number,
  nowMs: number,
): Promise<DomainError | null> {
  const debited = await trx
    .updateTable('wallets')
    .set((eb) => ({ balance: eb('balance', '-', amount), updated_at_ms: nowMs }))
    .where('app_code', '=', appCode)
    .where('user_id', '=', userId)
    .where('balance', '>=', amount)
    .executeTakeFirst();
  return Number(debited.numUpdatedRows) === 1 ? null : refuse('INSUFFICIENT_BALANCE');
}

/**
 * The most a balance may hold: JSON and JavaScript numbers are exact up to here, on both
 * backends (SQLite would otherwise turn a larger sum into a float, MySQL answer an error).
 */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

const { kind, code, message } = errors.BALANCE_LIMIT(MAX_BALANCE);
const BALANCE_LIMIT: DomainError = { kind, code, message };

/** Adds to a balance, or refuses (changing nothing) when it would pass {@link MAX_BALANCE}. */
async function credit(
  db: Db,
  appCode: string,
  userId: string,
  amount: number,
  nowMs: number,
): Promise<DomainError | null> {
  if (amount === 0) return null;
  if (!Number.isSafeInteger(amount) || amount > MAX_BALANCE) return BALANCE_LIMIT;
  const updated = await db
    .updateTable('wallets')
    .set((eb) => ({ balance: eb('balance', '+', amount), updated_at_ms: nowMs }))
    .where('app_code', '=', appCode)
    .where('user_id', '=', userId)
    .where('balance', '<=', MAX_BALANCE - amount)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 1) return null;
  const exists = await db
    .selectFrom('wallets')
    .select('user_id')
    .where('app_code', '=', appCode)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (exists) return BALANCE_LIMIT;
  try {
    await db
      .insertInto('wallets')
      .values({ app_code: appCode, user_id: userId, balance: amount, updated_at_ms: nowMs })
      .execute();
    return null;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // Created concurrently: the row exists now, so the update applies.
    return credit(db, appCode, userId, amount, nowMs);
  }
}

/** Admin top-up; the request id makes retries idempotent. */
export async function topUp(
  db: Kysely<Database>,
  appCode: string,
  userId: string,
  amount: number,
  requestId: string,
  nowMs: number,
): Promise<TopUpResult> {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw errors.INVALID_ARGUMENT('amount must be a positive integer');
  }
  try {
    const balance = await db.transaction().execute(async (trx) => {
      const ledger = await trx
        .insertInto('wallet_ledger')
        .values({
          app_code: appCode,
          request_id: requestId,
          kind: 'topup',
          user_id: userId,
          amount,
          room_id: null,
          detail: '{}',
          created_at_ms: nowMs,
        })
        .executeTakeFirst();
      const refused = await credit(trx, appCode, userId, amount, nowMs);
      if (refused) throw AppError.from(refused);
      // The balance this top-up made is its answer; a retry answers it again (below).
      const after = await balanceOf(trx, appCode, userId);
      await trx
        .updateTable('wallet_ledger')
        .set({ detail: JSON.stringify({ balance: after }) })
        .where('id', '=', Number(ledger.insertId))
        .execute();
      return after;
    });
    return { balance, duplicate: false };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const earlier = await db
      .selectFrom('wallet_ledger')
      .select(['kind', 'user_id', 'amount', 'detail'])
      .where('app_code', '=', appCode)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
    if (
      earlier?.kind !== 'topup' ||
      earlier.user_id !== userId ||
      Number(earlier.amount) !== amount
    ) {
      throw errors.REQUEST_ID_REUSED();
    }
    const first = (JSON.parse(earlier.detail) as { balance?: unknown }).balance;
    // Top-ups recorded before the balance was kept answer the current one.
    const balance = typeof first === 'number' ? first : await balanceOf(db, appCode, userId);
    return { balance, duplicate: true };
  }
}

/** The balance, exactly; AMOUNT_NOT_EXACT (500) rather than a rounded one past 2^53 − 1. */
export async function balanceOf(db: Db, appCode: string, userId: string): Promise<number> {
  const text = await balanceText(db, appCode, userId);
  return exactAmount(text, 'the balance');
}

/** The balance, exactly, or null past 2^53 − 1. */
async function storedBalance(db: Db, appCode: string, userId: string): Promise<number | null> {
  return amountOf(await balanceText(db, appCode, userId));
}

async function balanceText(db: Db, appCode: string, userId: string): Promise<string> {
  const row = await db
    .selectFrom('wallets')
    .select(exactly('balance').as('balance'))
    .where('app_code', '=', appCode)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.balance ?? '0';
}
