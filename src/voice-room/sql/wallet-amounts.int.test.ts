/**
 * Money is never answered rounded, on SQLite and on MariaDB. Balances and prices are BIGINT
 * and both drivers round a value past 2^53 − 1 once it is a JavaScript number. The API
 * stops balances at 2^53 − 1 (BALANCE_LIMIT), and a balance or price written past it another
 * way (an import, a manual fix: here a raw UPDATE) is refused (AMOUNT_NOT_EXACT) wherever it
 * would be answered or charged, and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import {
  mariadbRedisBackend,
  sqliteMemoryBackend,
  startHost,
  type TestBackend,
  type TestHost,
} from '../../cell/testing/harness.js';
import type { VoiceRoomCommand } from '../domain/types.js';
import { clusterSkipReason } from '../../testing/backends.js';
import { findGift, listGifts, putGift } from './catalog.js';
import { voiceRoomWithSql } from './index.js';
import { balanceOf, topUp } from './wallet.js';

const voice = voiceRoomWithSql({
  presenceTimeoutMs: 60_000,
  publishTimeoutMs: 15_000,
  maxSeats: 8,
});
const MAX = Number.MAX_SAFE_INTEGER; // 9007199254740991
const PAST = ['9007199254740992', '9007199254740993', '18014398509481985'];

function suite(name: string, open: () => Promise<TestBackend>, skip: string | false) {
  describe(`exact money (${name})`, { skip }, () => {
    let backend: TestBackend;
    const hosts: TestHost[] = [];
    let seq = 0;
    const fresh = () => `amt-${++seq}-${Date.now().toString(36)}`;
    const db = () => backend.inspect.db;
    /** What an outside writer stores: the digits as they are, never through a JS number. */
    const storeBalance = (user: string, digits: string) =>
      sql`UPDATE wallets SET balance = ${sql.raw(digits)} WHERE user_id = ${user}`.execute(db());
    const storedBalance = async (user: string) =>
      (
        await sql<{
          b: string;
        }>`SELECT CAST(balance AS CHAR) AS b FROM wallets WHERE user_id = ${user}`.execute(db())
      ).rows[0]?.b;

    before(async () => {
      backend = await open();
    });
    afterEach(async () => {
      for (const h of hosts.splice(0)) await h.kill();
    });
    after(async () => {
      await backend?.close();
    });

    it('answers a balance of exactly 2^53 − 1 and refuses any top-up past it', async () => {
      const user = `max-${fresh()}`;
      const first = await topUp(db(), 'default', user, MAX, `top-${user}`, Date.now());
      assert.equal(first.balance, MAX);
      assert.equal(await balanceOf(db(), 'default', user), MAX);
      await assert.rejects(topUp(db(), 'default', user, 1, `more-${user}`, Date.now()), {
        code: 'BALANCE_LIMIT',
      });
      assert.equal(await storedBalance(user), String(MAX));
      // A retry of the first top-up answers the same exact balance.
      const retry = await topUp(db(), 'default', user, MAX, `top-${user}`, Date.now());
      assert.deepEqual(retry, { balance: MAX, duplicate: true });
    });

    it('refuses to answer a balance stored past 2^53 − 1 instead of rounding it', async () => {
      for (const digits of PAST) {
        const user = `past-${fresh()}`;
        await topUp(db(), 'default', user, 5, `top-${user}`, Date.now());
        await storeBalance(user, digits);
        await assert.rejects(balanceOf(db(), 'default', user), {
          kind: 'internal',
          code: 'AMOUNT_NOT_EXACT',
        });
        // A top-up onto it is refused too, and the stored digits stay as they were.
        await assert.rejects(topUp(db(), 'default', user, 1, `more-${user}`, Date.now()), {
          code: 'BALANCE_LIMIT',
        });
        assert.equal(await storedBalance(user), digits);
      }
    });

    it('refuses a gift whose sender balance or price is past 2^53 − 1, charging nobody', async () => {
      const { host } = await startHost(backend, { domains: [voice] }).then((h) => {
        hosts.push(h);
        return h;
      });
      const roomId = fresh();
      const [payer, receiver] = [`payer-${roomId}`, `receiver-${roomId}`];
      const run = async (command: VoiceRoomCommand, requestId?: string) => {
        const routed = await host.execute(
          voice,
          { appCode: 'default', roomId },
          command,
          requestId ? { requestId } : {},
        );
        assert.equal(routed.kind, 'local');
        return routed.kind === 'local' ? routed.value : (undefined as never);
      };
      await putGift(
        db(),
        'default',
        { gift_id: `g-${roomId}`, name: 'G', price: 10, active: true },
        Date.now(),
      );
      await topUp(db(), 'default', payer, 100, `top-${payer}`, Date.now());
      await topUp(db(), 'default', receiver, 7, `top-${receiver}`, Date.now());
      await run({ type: 'CreateRoom', owner_user_id: payer, title: 'T', seat_count: 2 });
      for (const u of [payer, receiver]) await run({ type: 'JoinRoom', user_id: u });
      const gift: VoiceRoomCommand = {
        type: 'SendGift',
        sender_user_id: payer,
        receiver_user_ids: [receiver],
        gift_id: `g-${roomId}`,
        count: 1,
        unit_price: 10,
      };
      const ledger = async () =>
        (
          await db()
            .selectFrom('wallet_ledger')
            .select('request_id')
            .where('kind', '=', 'gift')
            .where('user_id', '=', payer)
            .execute()
        ).length;

      // The sender's balance was written far past the limit (still past it after the charge):
      // the gift's answer would be rounded.
      await storeBalance(payer, PAST[2]!);
      await assert.rejects(run(gift, `gift-a-${roomId}`), { code: 'AMOUNT_NOT_EXACT' });
      assert.deepEqual(
        [await storedBalance(payer), await storedBalance(receiver), await ledger()],
        [PAST[2], '7', 0],
      );

      // The price was written past the limit: the catalog refuses to show or charge it.
      await storeBalance(payer, '100');
      await sql`UPDATE gift_catalog SET price = ${sql.raw(PAST[1]!)} WHERE gift_id = ${`g-${roomId}`}`.execute(
        db(),
      );
      await assert.rejects(findGift(db(), 'default', `g-${roomId}`), { code: 'AMOUNT_NOT_EXACT' });
      await assert.rejects(listGifts(db(), 'default'), { code: 'AMOUNT_NOT_EXACT' });
      // A command still carrying the old price finds it changed to one it cannot compare.
      await assert.rejects(run(gift, `gift-b-${roomId}`), { code: 'AMOUNT_NOT_EXACT' });
      assert.deepEqual(
        [await storedBalance(payer), await storedBalance(receiver), await ledger()],
        ['100', '7', 0],
      );
    });
  });
}

suite('SQLite', sqliteMemoryBackend, false);
suite('MariaDB', () => mariadbRedisBackend(), await clusterSkipReason());
