/**
 * The voice room on the real runtime: its durable timers (publish timeout, stale presence),
 * its projections, no rows for unknown rooms, and one wallet spent from two rooms on two
 * hosts without overdraft.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CellHost } from '../../cell/host.js';
import {
  eventually,
  mariadbRedisBackend,
  sqliteMemoryBackend,
  startHost,
  type TestBackend,
  type TestHost,
} from '../../cell/testing/harness.js';
import { presenceOf } from '../domain/evolve.js';
import type { VoiceRoomCommand } from '../domain/types.js';
import { clusterSkipReason } from '../../testing/backends.js';
import { putGift } from './catalog.js';
import { topUp } from './wallet.js';
import { voiceRoomWithSql } from './index.js';

const voice = voiceRoomWithSql({ presenceTimeoutMs: 1_000, publishTimeoutMs: 300, maxSeats: 8 });
const key = (roomId: string) => ({ appCode: 'default', roomId });

async function run(host: CellHost, roomId: string, command: VoiceRoomCommand, requestId?: string) {
  const routed = await host.execute(voice, key(roomId), command, requestId ? { requestId } : {});
  assert.equal(routed.kind, 'local');
  return routed.kind === 'local' ? routed.value : (undefined as never);
}

async function state(host: CellHost, roomId: string) {
  const routed = await host.query(voice, key(roomId), (s) => s);
  assert.equal(routed.kind, 'local');
  return routed.kind === 'local' ? routed.value : (undefined as never);
}

function suite(name: string, open: () => Promise<TestBackend>, skip: string | false) {
  describe(`voice room on the runtime (${name})`, { skip }, () => {
    let backend: TestBackend;
    const hosts: TestHost[] = [];
    const host = async () => {
      const h = await startHost(backend, { domains: [voice] });
      hosts.push(h);
      return h.host;
    };
    let seq = 0;
    const fresh = () => `vr-${++seq}-${Date.now().toString(36)}`;
    const create = async (h: CellHost, roomId: string, owner = 'owner') =>
      run(h, roomId, { type: 'CreateRoom', owner_user_id: owner, title: 'T', seat_count: 4 });

    before(async () => {
      backend = await open();
    });
    afterEach(async () => {
      for (const h of hosts.splice(0)) await h.kill();
    });
    after(async () => {
      await backend?.close();
    });

    it('releases an unconfirmed seat at its publish deadline, through the timer path', async () => {
      const h = await host();
      const roomId = fresh();
      await create(h, roomId);
      await run(h, roomId, { type: 'JoinRoom', user_id: 'u1' });
      await run(h, roomId, { type: 'MicUp', user_id: 'u1', seat_index: 2 });
      await eventually(async () => (await state(h, roomId)).seats[2]!.state === 'idle');
      const row = await backend.inspect.db
        .selectFrom('room_list_entries')
        .select(['online_count', 'mic_count'])
        .where('room_id', '=', roomId)
        .executeTakeFirstOrThrow();
      assert.deepEqual([Number(row.online_count), Number(row.mic_count)], [1, 0]);
    });

    it('turns a member without heartbeats into stale_left and frees the seat; heartbeats keep one present', async () => {
      const h = await host();
      const roomId = fresh();
      await create(h, roomId);
      for (const u of ['quiet', 'chatty']) await run(h, roomId, { type: 'JoinRoom', user_id: u });
      await run(h, roomId, { type: 'MicUp', user_id: 'quiet', seat_index: 0 });
      await run(h, roomId, {
        type: 'ConfirmMicPublishing',
        user_id: 'quiet',
        mic_session_id: (await state(h, roomId)).seats[0]!.mic_session_id!,
      });
      const beat = setInterval(
        () =>
          void run(h, roomId, { type: 'RoomHeartbeat', user_id: 'chatty' }).catch(() => undefined),
        200,
      );
      try {
        await eventually(
          // stale_left: no entry (domain/types.ts, VoiceRoomState.presence).
          async () => presenceOf(await state(h, roomId), 'quiet') === undefined,
        );
      } finally {
        clearInterval(beat);
      }
      const s = await state(h, roomId);
      assert.equal(s.seats[0]!.user_id, null);
      assert.equal(presenceOf(s, 'chatty')?.state, 'present');
    });

    it('keeps rooms and room_list_entries in step, and writes no row for unknown rooms', async () => {
      const h = await host();
      const roomId = fresh();
      await create(h, roomId, 'alice');
      await run(h, roomId, { type: 'JoinRoom', user_id: 'bob' });
      await run(h, roomId, { type: 'CloseRoom', operator_user_id: 'alice' });
      const room = await backend.inspect.db
        .selectFrom('rooms')
        .selectAll()
        .where('room_id', '=', roomId)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [room.status, Number(room.room_version), room.owner_user_id, Number(room.seat_count)],
        ['closed', 3, 'alice', 4],
      );
      const entry = await backend.inspect.db
        .selectFrom('room_list_entries')
        .selectAll()
        .where('room_id', '=', roomId)
        .executeTakeFirstOrThrow();
      assert.deepEqual([entry.status, Number(entry.online_count)], ['closed', 0]);

      const ghost = fresh();
      await assert.rejects(
        h.query(voice, key(ghost), (s) => s),
        { code: 'ROOM_NOT_FOUND' },
      );
      await assert.rejects(run(h, ghost, { type: 'JoinRoom', user_id: 'x' }), {
        code: 'ROOM_NOT_FOUND',
      });
      const cells = await backend.inspect.db
        .selectFrom('room_cells')
        .select('room_id')
        .where('room_id', '=', ghost)
        .execute();
      assert.deepEqual(cells, []);
    });

    it('never overdraws a wallet spent from two rooms on two hosts', async () => {
      const [h1, h2] = [await host(), await host()];
      const [r1, r2] = [fresh(), fresh()];
      const db = backend.inspect.db;
      await putGift(
        db,
        'default',
        { gift_id: 'coin', name: 'Coin', price: 10, active: true },
        Date.now(),
      );
      const payer = `payer-${r1}`;
      await topUp(db, 'default', payer, 100, `top-${r1}`, Date.now());
      for (const [h, r] of [
        [h1, r1],
        [h2, r2],
      ] as const) {
        await create(h, r);
        for (const u of [payer, 'fan']) await run(h, r, { type: 'JoinRoom', user_id: u });
      }
      const gift: VoiceRoomCommand = {
        type: 'SendGift',
        sender_user_id: payer,
        receiver_user_ids: ['fan'],
        gift_id: 'coin',
        count: 1,
        unit_price: 10,
      };
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) =>
          run(i % 2 ? h1 : h2, i % 2 ? r1 : r2, gift, `spend-${r1}-${i}`),
        ),
      );
      const ok = results.filter((r) => r.status === 'fulfilled').length;
      const refused = results.filter(
        (r) =>
          r.status === 'rejected' &&
          (r.reason as { code?: string }).code === 'INSUFFICIENT_BALANCE',
      ).length;
      assert.deepEqual([ok, refused], [10, 20]);
      const wallet = await db
        .selectFrom('wallets')
        .select('balance')
        .where('user_id', '=', payer)
        .executeTakeFirstOrThrow();
      assert.equal(Number(wallet.balance), 0);
      const ledger = await db
        .selectFrom('wallet_ledger')
        .select('request_id')
        .where('user_id', '=', payer)
        .where('kind', '=', 'gift')
        .execute();
      assert.equal(ledger.length, 10);
    });

    it('refuses top-ups and gifts that would take a balance past 2^53, changing nothing', async () => {
      const h = await host();
      const r = fresh();
      const db = backend.inspect.db;
      const balance = async (user: string) =>
        Number(
          (
            await db
              .selectFrom('wallets')
              .select('balance')
              .where('user_id', '=', user)
              .executeTakeFirst()
          )?.balance ?? 0,
        );
      const [rich, payer] = [`rich-${r}`, `payer-${r}`];
      const max = Number.MAX_SAFE_INTEGER;
      await topUp(db, 'default', rich, max - 5, `top-rich-${r}`, Date.now());
      await assert.rejects(topUp(db, 'default', rich, 6, `top-more-${r}`, Date.now()), {
        kind: 'validation',
        code: 'BALANCE_LIMIT',
      });
      await assert.rejects(topUp(db, 'default', rich, max + 1, `top-unsafe-${r}`, Date.now()), {
        kind: 'validation',
      });
      assert.equal(await balance(rich), max - 5);
      await putGift(
        db,
        'default',
        { gift_id: 'bar', name: 'Bar', price: 10, active: true },
        Date.now(),
      );
      await topUp(db, 'default', payer, 100, `top-payer-${r}`, Date.now());
      await create(h, r);
      for (const u of [payer, rich]) await run(h, r, { type: 'JoinRoom', user_id: u });
      const gift: VoiceRoomCommand = {
        type: 'SendGift',
        sender_user_id: payer,
        receiver_user_ids: [rich],
        gift_id: 'bar',
        count: 1,
        unit_price: 10,
      };
      await assert.rejects(run(h, r, gift, `gift-${r}`), { code: 'BALANCE_LIMIT' });
      assert.deepEqual([await balance(payer), await balance(rich)], [100, max - 5]);
    });

    it('moves rooms.updated_at_ms forward with every commit, whatever the event', async () => {
      const h = await host();
      const r = fresh();
      const updatedAt = async () =>
        Number(
          (
            await backend.inspect.db
              .selectFrom('rooms')
              .select('updated_at_ms')
              .where('room_id', '=', r)
              .executeTakeFirstOrThrow()
          ).updated_at_ms,
        );
      await create(h, r);
      await run(h, r, { type: 'JoinRoom', user_id: 'owner' });
      const before = await updatedAt();
      await new Promise((resolve) => setTimeout(resolve, 5));
      // A lock carries no time of its own: the commit's time is what the row records.
      await run(h, r, {
        type: 'SetMicSeatLock',
        seat_index: 1,
        locked: true,
        operator_user_id: 'owner',
      });
      assert.ok((await updatedAt()) > before, 'updated_at_ms moved forward');
    });
  });
}

suite('SQLite + in-memory', sqliteMemoryBackend, false);
suite('MariaDB + Redis', () => mariadbRedisBackend(), await clusterSkipReason());
