/**
 * The rankings' rows on SQLite and on MariaDB: a gift adds to the sender's contribution and
 * each receiver's charm, all time and for the day; a gift on a new day (in the configured
 * time zone) starts the day's totals again while the all-time ones go on; the top is the
 * largest first, equal totals in the order they were reached.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  mariadbRedisBackend,
  sqliteMemoryBackend,
  type TestBackend,
} from '../../cell/testing/harness.js';
import { clusterSkipReason } from '../../testing/backends.js';
import type { VoiceRoomEvent } from '../domain/types.js';
import { addGiftToRankings, rankingDay, topOfRanking } from './rankings.js';

type GiftSent = Extract<VoiceRoomEvent, { type: 'GiftSent' }>;
const gift = (sender: string, receivers: string[], unit_price: number, count = 1): GiftSent => ({
  type: 'GiftSent',
  sender_user_id: sender,
  receiver_user_ids: receivers,
  gift_id: 'rose',
  count,
  unit_price,
  total_price: unit_price * count * receivers.length,
});
// 2026-12-05 15:30 UTC: 23:30 in Shanghai; an hour later it is the 6th there, still the 5th in UTC.
const T = Date.UTC(2026, 11, 5, 15, 30);
const HOUR = 3_600_000;

function suite(name: string, open: () => Promise<TestBackend>, skip: string | false) {
  describe(`gift rankings (${name})`, { skip }, () => {
    let backend: TestBackend;
    before(async () => {
      backend = await open();
    });
    after(async () => {
      await backend?.close();
    });
    const db = () => backend.inspect.db;
    const add = (roomId: string, g: GiftSent, nowMs: number, timeZone: string) =>
      db()
        .transaction()
        .execute((trx) =>
          addGiftToRankings(trx, { appCode: 'default', roomId }, g, nowMs, {
            enabled: true,
            timeZone,
          }),
        );
    const top = async (
      roomId: string,
      board: 'contribution' | 'charm',
      period: 'day' | 'all',
      nowMs: number,
      timeZone: string,
    ) =>
      (
        await topOfRanking(db(), { appCode: 'default', roomId }, board, period, 10, nowMs, timeZone)
      ).entries.map((e) => [e.user_id, e.total]);

    it('adds each gift to both boards, and a new day starts the day over', async () => {
      const room = `rank-${name}-${Date.now()}`;
      const tz = 'Asia/Shanghai';
      await add(room, gift('1', ['2', '3'], 5, 2), T, tz); // 1 pays 20; 2 and 3 get 10 each
      await add(room, gift('4', ['2'], 7), T + 1, tz); // 4 pays 7; 2 gets 7
      assert.deepEqual(await top(room, 'contribution', 'all', T, tz), [
        ['1', 20],
        ['4', 7],
      ]);
      assert.deepEqual(await top(room, 'charm', 'day', T, tz), [
        ['2', 17],
        ['3', 10],
      ]);
      // An hour later it is the next day in Shanghai.
      const next = T + HOUR;
      assert.notEqual(rankingDay(next, tz), rankingDay(T, tz));
      assert.deepEqual(await top(room, 'charm', 'day', next, tz), [], 'nothing yet today');
      await add(room, gift('4', ['3'], 30), next, tz);
      assert.deepEqual(await top(room, 'charm', 'day', next, tz), [['3', 30]]);
      assert.deepEqual(await top(room, 'charm', 'all', next, tz), [
        ['3', 40],
        ['2', 17],
      ]);
      assert.deepEqual(await top(room, 'contribution', 'day', next, tz), [['4', 30]]);
      assert.deepEqual(await top(room, 'contribution', 'all', next, tz), [
        ['4', 37],
        ['1', 20],
      ]);
    });

    it('orders equal totals by who reached them first; a free gift counts nothing', async () => {
      const room = `tie-${name}-${Date.now()}`;
      await add(room, gift('9', ['5'], 10), T, 'UTC');
      await add(room, gift('8', ['6'], 10), T + 1, 'UTC');
      await add(room, gift('7', ['5'], 0), T + 2, 'UTC');
      assert.deepEqual(await top(room, 'charm', 'all', T + 3, 'UTC'), [
        ['5', 10],
        ['6', 10],
      ]);
      assert.deepEqual(await top(room, 'contribution', 'all', T + 3, 'UTC'), [
        ['9', 10],
        ['8', 10],
      ]);
    });
  });
}

suite('SQLite', sqliteMemoryBackend, false);
suite('MariaDB', () => mariadbRedisBackend(), await clusterSkipReason());
