/**
 * The gift rankings (榜单) of a voice room: per sender the value sent (contribution, 贡献榜),
 * per receiver the value received (charm, 魅力榜), for the room's lifetime and for the current
 * day (one row per user and board holds both; a new day starts the day's total again).
 * Added to in each gift's own transaction (./wallet.ts `chargeGift`), so the totals are the
 * sum of the room's gift ledger rows at every commit: a gift counted is a gift charged, once.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  CompiledQuery,
  MysqlAdapter,
  sql,
  type Insertable,
  type Kysely,
  type Transaction,
} from 'kysely';
import type { CellKey } from '../../cell/lease.js';
import type { Database } from '../../adapters/sql/schema.js';
import type { RankingBoard, RankingEntry, RankingPeriod } from '../api/voice-store.js';
import type { VoiceRoomEvent } from '../domain/types.js';
import { exactAmount } from './amounts.js';

export interface RankingSettings {
  /** Off: gifts are charged without touching the rankings (a deployment with its own). */
  readonly enabled: boolean;
  /** The day's time zone (IANA). */
  readonly timeZone: string;
}

/** Kept, days in UTC: unless configured otherwise (ROOMS_VOICE_RANKINGS, …_TIME_ZONE). */
export const DEFAULT_RANKINGS: RankingSettings = { enabled: true, timeZone: 'UTC' };

type GiftSent = Extract<VoiceRoomEvent, { type: 'GiftSent' }>;

/** Formatters by time zone: making one costs far more than formatting with it. */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The day `nowMs` falls on in `timeZone`: `YYYY-MM-DD`. */
export function rankingDay(nowMs: number, timeZone: string): string {
  let format = dayFormats.get(timeZone);
  if (!format) {
    // en-CA writes dates as YYYY-MM-DD.
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    dayFormats.set(timeZone, format);
  }
  return format.format(nowMs);
}

/**
 * Adds a charged gift to the boards, all time and the day: one row per user and board, one
 * statement, rows in key order (two rooms' gifts never wait on each other's rows in
 * opposite orders). A row last counted on another day starts the day's total again.
 */
export async function addGiftToRankings(
  trx: Transaction<Database>,
  key: CellKey,
  gift: GiftSent,
  nowMs: number,
  settings: RankingSettings,
): Promise<void> {
  if (!settings.enabled || gift.total_price <= 0) return;
  const day = rankingDay(nowMs, settings.timeZone);
  const share = gift.unit_price * gift.count;
  const amounts: { board: RankingBoard; user_id: string; total: number }[] = [
    { board: 'contribution', user_id: gift.sender_user_id, total: gift.total_price },
    ...gift.receiver_user_ids.map((user_id) => ({
      board: 'charm' as const,
      user_id,
      total: share,
    })),
  ];
  const rows = amounts
    .map((a) => ({
      app_code: key.appCode,
      room_id: key.roomId,
      board: a.board,
      user_id: a.user_id,
      total: a.total,
      updated_at_ms: nowMs,
      day,
      day_total: a.total,
      day_updated_at_ms: nowMs,
    }))
    .sort((a, b) => compareKeys([a.board, a.user_id], [b.board, b.user_id]));
  await upsertRows(trx, rows);
}

type RankingRow = Insertable<Database['voice_room_rankings']>;

/** The row's columns, in the order the statement takes their values. */
const COLUMNS = [
  'app_code',
  'room_id',
  'board',
  'user_id',
  'total',
  'updated_at_ms',
  'day',
  'day_total',
  'day_updated_at_ms',
] as const satisfies readonly (keyof RankingRow)[];

/**
 * The upsert's SQL by dialect and row count, built by Kysely once: building and compiling it
 * for every gift was JavaScript work on the room's one commit path (docs/benchmarks.md).
 */
const upsertSql = new Map<string, string>();

async function upsertRows(trx: Transaction<Database>, rows: readonly RankingRow[]): Promise<void> {
  const parameters = rows.flatMap((row) => COLUMNS.map((column) => row[column]));
  // The transaction's own dialect: one domain serves both backends.
  const mysql = trx.getExecutor().adapter instanceof MysqlAdapter;
  const key = `${mysql ? 'mysql' : 'sqlite'}:${rows.length}`;
  const cached = upsertSql.get(key);
  if (cached !== undefined) {
    await trx.executeQuery(CompiledQuery.raw(cached, parameters));
    return;
  }
  const query = upsertQuery(trx, rows, mysql).compile();
  // Kept only when Kysely takes the values in the order assumed above.
  if (isDeepStrictEqual(query.parameters, parameters)) upsertSql.set(key, query.sql);
  await trx.executeQuery(query);
}

function upsertQuery(trx: Transaction<Database>, rows: readonly RankingRow[], mysql: boolean) {
  const insert = trx
    .insertInto('voice_room_rankings')
    .values(rows.map((row) => Object.fromEntries(COLUMNS.map((c) => [c, row[c]])) as RankingRow));
  return mysql
    ? // MySQL assigns in order, each seeing the ones before: `day` goes last.
      insert.onDuplicateKeyUpdate({
        total: sql`total + VALUES(total)`,
        updated_at_ms: sql`VALUES(updated_at_ms)`,
        day_total: sql`IF(day = VALUES(day), day_total + VALUES(day_total), VALUES(day_total))`,
        day_updated_at_ms: sql`VALUES(day_updated_at_ms)`,
        day: sql`VALUES(day)`,
      })
    : insert.onConflict((oc) =>
        oc.columns(['app_code', 'room_id', 'board', 'user_id']).doUpdateSet({
          total: sql`total + excluded.total`,
          updated_at_ms: sql`excluded.updated_at_ms`,
          day_total: sql`CASE WHEN day = excluded.day THEN day_total + excluded.day_total ELSE excluded.day_total END`,
          day_updated_at_ms: sql`excluded.day_updated_at_ms`,
          day: sql`excluded.day`,
        }),
      );
}

function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) {
    const order = Buffer.compare(Buffer.from(a[i]!), Buffer.from(b[i]!));
    if (order !== 0) return order;
  }
  return 0;
}

/**
 * A board's top `limit`: largest total first; equal totals in the order they were reached
 * (the earlier last gift first), then by user id. Names are the accounts' nicknames now.
 */
export async function topOfRanking(
  db: Kysely<Database>,
  key: CellKey,
  board: RankingBoard,
  period: RankingPeriod,
  limit: number,
  nowMs: number,
  timeZone: string,
): Promise<{ day: string; entries: RankingEntry[] }> {
  const day = period === 'day' ? rankingDay(nowMs, timeZone) : '';
  const board_ = db
    .selectFrom('voice_room_rankings')
    .where('app_code', '=', key.appCode)
    .where('room_id', '=', key.roomId)
    .where('board', '=', board);
  // Ordered by the numbers, not by their text (selected apart, for exactness).
  const rows = await (
    period === 'all'
      ? board_
          .select(['user_id', sql<string>`CAST(total AS CHAR)`.as('exact_total')])
          .orderBy('total', 'desc')
          .orderBy('updated_at_ms', 'asc')
      : board_
          .select(['user_id', sql<string>`CAST(day_total AS CHAR)`.as('exact_total')])
          .where('day', '=', day)
          .orderBy('day_total', 'desc')
          .orderBy('day_updated_at_ms', 'asc')
  )
    .orderBy('user_id', 'asc')
    .limit(limit)
    .execute();
  const names = await nicknamesOf(
    db,
    key.appCode,
    rows.map((r) => r.user_id),
  );
  return {
    day,
    entries: rows.map((row) => ({
      user_id: row.user_id,
      user_name: names.get(row.user_id) ?? '',
      total: exactAmount(row.exact_total, `ranking total of ${row.user_id}`),
    })),
  };
}

/** The nicknames of the accounts among `userIds` (decimal account ids), by id. */
export async function nicknamesOf(
  db: Kysely<Database>,
  appCode: string,
  userIds: readonly string[],
): Promise<Map<string, string>> {
  const ids = userIds.map(Number).filter((id) => Number.isSafeInteger(id));
  if (ids.length === 0) return new Map();
  const users = await db
    .selectFrom('users')
    .select(['id', 'nickname'])
    .where('app_code', '=', appCode)
    .where('id', 'in', ids)
    .execute();
  return new Map(users.map((u) => [String(u.id), u.nickname]));
}
