/**
 * Gifts in opposite directions on MariaDB: A→B in one room and B→A in another, committed at
 * the same time on two hosts, never deadlock (each gift locks the wallets in one order), and
 * a lock conflict that still happens is run again inside the cell instead of fencing it: no
 * room is reloaded, money is conserved and each gift is charged once.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { MemoryLeaseManager } from '../../adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../../adapters/memory/memory-node-registry.js';
import type { CellHost } from '../../cell/host.js';
import {
  mariadbRedisBackend,
  startHost,
  type TestBackend,
  type TestHost,
} from '../../cell/testing/harness.js';
import type { VoiceRoomCommand } from '../domain/types.js';
import { systemClock } from '../../shared/clock.js';
import { clusterSkipReason } from '../../testing/backends.js';
import {
  privateMariadbSkipReason,
  startPrivateMariadb,
  type PrivateMariadb,
} from '../../testing/private-mariadb.js';
import { openSqlBackend, type SqlBackend } from '../../adapters/sql/database.js';
import { putGift } from './catalog.js';
import { voiceRoomWithSql } from './index.js';
import { balanceOf, topUp } from './wallet.js';

const voice = voiceRoomWithSql({
  presenceTimeoutMs: 60_000,
  publishTimeoutMs: 60_000,
  maxSeats: 8,
});
const key = (roomId: string) => ({ appCode: 'default', roomId });

async function run(host: CellHost, roomId: string, command: VoiceRoomCommand, requestId: string) {
  const routed = await host.execute(voice, key(roomId), command, { requestId });
  assert.equal(routed.kind, 'local');
  return routed.kind === 'local' ? routed.value : (undefined as never);
}

const gift = (from: string, to: string): VoiceRoomCommand => ({
  type: 'SendGift',
  sender_user_id: from,
  receiver_user_ids: [to],
  gift_id: 'coin',
  count: 1,
  unit_price: 10,
});

/** What a host's metrics say about its cells: fenced (reloaded) and lock retries. */
async function counts(host: CellHost) {
  const value = async (c: { get(): Promise<{ values: { value: number }[] }> }) =>
    (await c.get()).values[0]?.value ?? 0;
  return {
    fenced: await value(host.metrics.fenced),
    lockRetries: await value(host.metrics.lockRetries),
  };
}

/** Two users in two rooms (one host each), each with 1000 in the wallet. */
async function twoRooms(backend: TestBackend, hosts: TestHost[], tag: string) {
  const [h1, h2] = [
    // The lease outlives a commit that waits on a lock (renewals queue behind the batch).
    await startHost(backend, { domains: [voice], config: { leaseTtlMs: 10_000 } }),
    await startHost(backend, { domains: [voice], config: { leaseTtlMs: 10_000 } }),
  ];
  hosts.push(h1, h2);
  const db = backend.inspect.db;
  await putGift(db, 'default', { gift_id: 'coin', name: 'Coin', price: 10, active: true }, 1);
  const [a, b] = [`a-${tag}`, `b-${tag}`];
  for (const user of [a, b]) await topUp(db, 'default', user, 1_000, `top-${user}`, Date.now());
  const [x, y] = [`x-${tag}`, `y-${tag}`];
  for (const [h, room] of [
    [h1.host, x],
    [h2.host, y],
  ] as const) {
    await run(h, room, { type: 'CreateRoom', owner_user_id: a, title: 'T', seat_count: 4 }, 'c');
    for (const user of [a, b]) await run(h, room, { type: 'JoinRoom', user_id: user }, `j-${user}`);
  }
  return { h1: h1.host, h2: h2.host, a, b, x, y, db };
}

/** How many statements are running an update of `userId`'s wallet (waiting for its lock). */
async function updatesWaitingOn(db: SqlBackend['db'], userId: string): Promise<number> {
  const { rows } = await sql<{ n: unknown }>`
    SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
    WHERE INFO LIKE ${'update `wallets`%'} AND INFO LIKE ${`%'${userId}'%`}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

async function giftLedger(db: SqlBackend['db'], users: readonly string[]) {
  const rows = await db
    .selectFrom('wallet_ledger')
    .select(['request_id', 'amount'])
    .where('kind', '=', 'gift')
    .where('user_id', 'in', [...users])
    .execute();
  return rows.map((r) => ({ requestId: r.request_id, amount: Number(r.amount) }));
}

const skip = await clusterSkipReason();

void describe('gifts in opposite directions (MariaDB)', { skip }, () => {
  let backend: TestBackend;
  const hosts: TestHost[] = [];
  before(async () => {
    backend = await mariadbRedisBackend();
  });
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.kill();
  });
  after(async () => {
    await backend?.close();
  });

  void it('A→B and B→A at once in two rooms: no deadlock, no reload, each charged once', async () => {
    const { h1, h2, a, b, x, y, db } = await twoRooms(backend, hosts, Date.now().toString(36));
    const rounds = 30;
    for (let i = 0; i < rounds; i++) {
      // One gift each way per round, so the two rooms' transactions overlap every time.
      await Promise.all([run(h1, x, gift(a, b), `ab-${i}`), run(h2, y, gift(b, a), `ba-${i}`)]);
    }
    assert.deepEqual(
      [await counts(h1), await counts(h2)],
      [
        { fenced: 0, lockRetries: 0 },
        { fenced: 0, lockRetries: 0 },
      ],
      'no deadlock happened, so nothing was retried or reloaded',
    );
    assert.deepEqual(
      [await balanceOf(db, 'default', a), await balanceOf(db, 'default', b)],
      [1_000, 1_000],
    );
    const ledger = await giftLedger(db, [a, b]);
    assert.equal(ledger.length, 2 * rounds);
    assert.equal(new Set(ledger.map((r) => r.requestId)).size, 2 * rounds);
    assert.ok(ledger.every((r) => r.amount === -10));
    for (const [h, room] of [
      [h1, x],
      [h2, y],
    ] as const) {
      // Create, two joins, then one version per gift: every gift committed once.
      assert.equal(h.loaded(key(room))?.currentVersion, 3 + rounds);
    }
  });
});

void describe(
  'a gift that loses a lock wait (private MariaDB)',
  { skip: privateMariadbSkipReason() },
  () => {
    let db: PrivateMariadb;
    let backend: TestBackend;
    const hosts: TestHost[] = [];
    before(async () => {
      // A lock wait gives up after 1 s (50 s by default): the conflict happens in the test.
      db = await startPrivateMariadb({ serverArgs: ['--innodb-lock-wait-timeout=1'] });
      const url = await db.createDatabase('rooms');
      const opened: SqlBackend[] = [];
      const inspect = await openSqlBackend(url, { poolSize: 2 });
      const lease = new MemoryLeaseManager({ clock: systemClock });
      const registry = new MemoryNodeRegistry({ clock: systemClock });
      backend = {
        name: 'private MariaDB',
        concurrentTransactions: true,
        async sqlForHost() {
          const sql = await openSqlBackend(url, { poolSize: 4 });
          opened.push(sql);
          return sql;
        },
        inspect,
        coordination: () => ({ lease, registry, close: () => Promise.resolve() }),
        async close() {
          for (const sql of opened) await sql.close();
          await inspect.close();
        },
      };
    });
    afterEach(async () => {
      for (const h of hosts.splice(0)) await h.kill();
    });
    after(async () => {
      await backend?.close();
      await db?.stop();
    });

    void it('is run again inside the cell once the lock is free: no reload, charged once', async () => {
      const { h1, a, b, x, db: inspect } = await twoRooms(backend, hosts, 'wait');
      // Another transaction holds B's wallet row past the gift's lock wait.
      const blocker = await inspect.startTransaction().execute();
      await blocker
        .selectFrom('wallets')
        .select('balance')
        .where('app_code', '=', 'default')
        .where('user_id', '=', b)
        .forUpdate()
        .execute();
      const sent = run(h1, x, gift(a, b), 'blocked');
      let settled = false;
      sent.then(
        () => (settled = true),
        () => (settled = true),
      );
      try {
        // Released once the gift's update of B gave up its wait (the cell then runs the batch
        // again; without that retry the gift fails), or once the gift was answered.
        const until = Date.now() + 10_000;
        let seen = false;
        while (!settled) {
          const waiting = await updatesWaitingOn(inspect, b);
          if (seen && waiting === 0) break;
          seen ||= waiting > 0;
          assert.ok(Date.now() < until, 'the gift never lost its lock wait');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await blocker.rollback().execute();
      }
      const result = await sent;
      assert.equal(result.duplicate, false);
      const { fenced, lockRetries } = await counts(h1);
      assert.equal(fenced, 0, 'the room was not reloaded');
      assert.ok(lockRetries >= 1, 'the batch was run again');
      assert.equal(h1.loaded(key(x))?.currentVersion, 4);
      assert.deepEqual(
        [await balanceOf(inspect, 'default', a), await balanceOf(inspect, 'default', b)],
        [990, 1_010],
      );
      assert.deepEqual(await giftLedger(inspect, [a, b]), [{ requestId: 'blocked', amount: -10 }]);
    });
  },
);
