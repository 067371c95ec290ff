/**
 * ClaimPendingOutbox's contract, run on SQLite and on MariaDB (where each worker has its
 * own connection pool, like separate processes). Time is passed in, so lock expiry and
 * retry times are exact.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { SqlBackend } from '../adapters/sql/database.js';
import type { TestBackend } from '../cell/testing/harness.js';
import type { Claim, FencedSettlement, Settlement } from './outbox-store.js';
import { SqlOutboxStore } from './sql-outbox-store.js';
import { insertEvents, interleavedRooms, rowOf } from './testing/outbox-rows.js';

const T0 = 1_700_000_000_000;
const LOCK = 30_000;

export function claimContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false; rowLocks?: boolean } = {},
): void {
  describe('outbox claim store', { skip: options.skip ?? false }, () => {
    let backend: TestBackend;
    let sql: SqlBackend;
    let store: SqlOutboxStore;
    /** A second worker: its own pool on MariaDB. */
    let other: SqlOutboxStore;
    const claim = (s: SqlOutboxStore, workerId: string, nowMs: number, limit = 100) =>
      s.claim({ workerId, nowMs, lockMs: LOCK, limit, perRoomLimit: 100 });
    const settle = (c: Claim, make: (id: number) => Settlement, nowMs = T0) =>
      store.settle(
        c.events.map((e): FencedSettlement => ({ claim: c, settlement: make(e.id) })),
        nowMs,
      );

    before(async () => {
      backend = await openBackend();
      sql = backend.inspect;
      store = new SqlOutboxStore(await backend.sqlForHost());
      other = new SqlOutboxStore(await backend.sqlForHost());
    });
    beforeEach(async () => {
      await sql.db.deleteFrom('room_outbox').execute();
    });
    after(async () => {
      await backend?.close();
    });

    it('moves a batch to delivering with worker_id and lock_until_ms; an expired lock is claimed again', async () => {
      const ids = await insertEvents(sql.db, interleavedRooms(3, 1, 'a'));
      const first = await claim(store, 'w1', T0);
      assert.deepEqual(
        first.events.map((e) => e.eventId),
        ids,
      );
      assert.equal(first.lockUntilMs, T0 + LOCK);
      for (const id of ids) {
        const row = await rowOf(sql.db, id);
        assert.equal(row.status, 'delivering');
        assert.equal(row.worker_id, 'w1');
        assert.equal(Number(row.lock_until_ms), T0 + LOCK);
      }
      // Up to the last millisecond of the lock nobody else gets them.
      assert.equal((await claim(other, 'w2', T0 + LOCK - 1)).events.length, 0);
      const again = await claim(other, 'w2', T0 + LOCK);
      assert.deepEqual(
        again.events.map((e) => e.eventId),
        ids,
      );
      assert.equal((await rowOf(sql.db, ids[0]!)).worker_id, 'w2');
    });

    it('never hands one event to two concurrent workers, and takes only each room prefix', async () => {
      // Few rooms, so concurrent scans meet inside a room (v1 locked by one worker while
      // another reads v2); each claim may take 5 of a room, nothing is settled.
      const events = interleavedRooms(6, 15, 'c');
      const ids = await insertEvents(sql.db, events);
      const byRoom = new Map<string, string[]>();
      events.forEach((e, i) => byRoom.set(e.roomId, [...(byRoom.get(e.roomId) ?? []), ids[i]!]));
      const stores = [store, other, store, other];
      const claimedBy = new Map<string, string>();
      await Promise.all(
        stores.map(async (s, w) => {
          for (let round = 0; round < 20; round++) {
            const c = await s.claim({
              workerId: `w${w}`,
              nowMs: T0,
              lockMs: LOCK,
              limit: 7,
              perRoomLimit: 5,
            });
            for (const e of c.events) {
              assert.ok(!claimedBy.has(e.eventId), `${e.eventId} claimed twice`);
              claimedBy.set(e.eventId, `w${w}`);
            }
          }
        }),
      );
      for (const [room, roomIds] of byRoom) {
        const taken = roomIds.filter((id) => claimedBy.has(id));
        // A gap-free prefix: v+1 is never out while v is still in the table undelivered.
        assert.deepEqual(taken, roomIds.slice(0, taken.length), `room ${room}`);
        assert.ok(taken.length >= 1 && taken.length <= 5, `room ${room}: ${taken.length}`);
      }
    });

    // SQLite has one writer: no claim is ever half-way through when another starts.
    if (options.rowLocks) {
      it('does not pass a row another worker is claiming right now (SKIP LOCKED skips it, the order check does not)', async () => {
        const pool = backend.inspect.mysqlPool;
        assert.ok(pool, 'a MariaDB backend has a pool');
        const [v1, , w1] = await insertEvents(sql.db, [
          { roomId: 'k1', version: 1 },
          { roomId: 'k1', version: 2 },
          { roomId: 'k2', version: 1 },
        ]);
        // Another worker's claim transaction, paused between its SELECT and its UPDATE.
        const conn = await pool.promise().getConnection();
        try {
          await conn.query('START TRANSACTION');
          await conn.query('SELECT id FROM room_outbox WHERE event_id = ? FOR UPDATE', [v1]);
          const c = await claim(store, 'w1', T0);
          assert.deepEqual(
            c.events.map((e) => e.eventId),
            [w1],
            'k1 v2 was handed out while k1 v1 was being claimed',
          );
        } finally {
          await conn.query('ROLLBACK');
          conn.release();
        }
      });
    }

    it('keeps a room behind its in-flight or retryable event; failed and delivered ones do not block', async () => {
      const [r1v1, r1v2, r2v1, r2v2] = await insertEvents(sql.db, [
        { roomId: 'o1', version: 1 },
        { roomId: 'o1', version: 2 },
        { roomId: 'o2', version: 1 },
        { roomId: 'o2', version: 2 },
      ]);
      const one = await store.claim({
        workerId: 'w1',
        nowMs: T0,
        lockMs: LOCK,
        limit: 10,
        perRoomLimit: 1,
      });
      assert.deepEqual(
        one.events.map((e) => e.eventId),
        [r1v1, r2v1],
      );
      assert.equal((await claim(other, 'w2', T0 + 1)).events.length, 0, 'v2 behind v1');
      await store.settle(
        [
          {
            claim: one,
            settlement: {
              kind: 'retryable',
              id: one.events[0]!.id,
              error: 'HTTP 500',
              nextAttemptAtMs: T0 + 5_000,
            },
          },
          { claim: one, settlement: { kind: 'failed', id: one.events[1]!.id, error: 'HTTP 400' } },
        ],
        T0 + 2,
      );
      // o1 waits for its retry; o2's failed v1 is a dead letter, so v2 goes.
      const two = await claim(other, 'w2', T0 + 3);
      assert.deepEqual(
        two.events.map((e) => e.eventId),
        [r2v2],
      );
      const due = await claim(other, 'w2', T0 + 5_000);
      assert.deepEqual(
        due.events.map((e) => e.eventId),
        [r1v1, r1v2],
      );
      assert.equal(due.events[0]!.attempts, 1);
    });

    it('settles only while the claim still holds the row', async () => {
      const [id] = await insertEvents(sql.db, [{ roomId: 's1', version: 1 }]);
      const stale = await claim(store, 'w1', T0);
      const fresh = await claim(other, 'w2', T0 + LOCK);
      assert.equal(
        await settle(stale, (n) => ({ kind: 'delivered', id: n })),
        0,
        'the expired claim changed a row',
      );
      assert.equal((await rowOf(sql.db, id!)).status, 'delivering');
      assert.equal(await settle(fresh, (n) => ({ kind: 'delivered', id: n })), 1);
      const row = await rowOf(sql.db, id!);
      assert.equal(row.status, 'delivered');
      assert.equal(row.worker_id, 'w2');
      assert.equal(Number(row.attempts), 1);
    });

    it('records attempts and last_error, keeps the envelope, and releases untried events', async () => {
      const [a, b] = await insertEvents(sql.db, [
        { roomId: 'e1', version: 1 },
        { roomId: 'e1', version: 2 },
      ]);
      const envelope = (await rowOf(sql.db, a!)).envelope;
      const c = await claim(store, 'w1', T0);
      await store.settle(
        [
          {
            claim: c,
            settlement: {
              kind: 'retryable',
              id: c.events[0]!.id,
              error: 'HTTP 503: down',
              nextAttemptAtMs: T0 + 10,
            },
          },
          { claim: c, settlement: { kind: 'released', id: c.events[1]!.id } },
        ],
        T0,
      );
      const rowA = await rowOf(sql.db, a!);
      assert.deepEqual(
        [rowA.status, Number(rowA.attempts), rowA.last_error, rowA.envelope],
        ['retryable', 1, 'HTTP 503: down', envelope],
      );
      const rowB = await rowOf(sql.db, b!);
      assert.deepEqual(
        [rowB.status, Number(rowB.attempts), rowB.lock_until_ms],
        ['pending', 0, null],
      );
    });

    it('a skipped event (no webhook) is settled, not delivered: it frees its room and can be re-queued', async () => {
      const [v1] = await insertEvents(sql.db, [{ roomId: 'sk', version: 1, appCode: 'app-s' }], T0);
      const [v2] = await insertEvents(
        sql.db,
        [{ roomId: 'sk', version: 2, appCode: 'app-s' }],
        T0 + 100,
      );
      const c = await claim(store, 'w1', T0);
      await store.settle(
        [
          { claim: c, settlement: { kind: 'skipped', id: c.events[0]!.id, reason: 'no webhook' } },
          { claim: c, settlement: { kind: 'released', id: c.events[1]!.id } },
        ],
        T0 + 1,
      );
      const row = await rowOf(sql.db, v1!);
      assert.deepEqual(
        [row.status, Number(row.attempts), row.last_error, row.lock_until_ms],
        ['skipped', 0, 'no webhook', null],
      );
      // Settled: the room's next event is claimable, and only it counts as undelivered.
      assert.deepEqual(
        (await claim(other, 'w2', T0 + 2)).events.map((e) => e.eventId),
        [v2],
      );
      assert.equal(await store.oldestUndeliveredAtMs(), T0 + 100);
      assert.deepEqual(
        (await store.list({ status: 'skipped', limit: 10 })).map((r) => r.eventId),
        [v1],
      );
      // Re-queueing failed events leaves skipped ones alone; asking for skipped ones works.
      assert.equal(await store.requeue({ appCode: 'app-s' }, T0 + 3), 0);
      assert.equal(await store.requeue({ appCode: 'app-s', status: 'skipped' }, T0 + 3), 1);
      const requeued = await rowOf(sql.db, v1!);
      assert.deepEqual([requeued.status, Number(requeued.attempts)], ['pending', 0]);
    });

    it('lists, re-queues and fails events for the operator, and reports the oldest undelivered', async () => {
      assert.equal(await store.oldestUndeliveredAtMs(), null);
      const [x, y] = await insertEvents(
        sql.db,
        [
          { roomId: 'q1', version: 1, appCode: 'app-x' },
          { roomId: 'q2', version: 1, appCode: 'app-y' },
        ],
        T0,
      );
      assert.equal(await store.oldestUndeliveredAtMs(), T0);
      const c = await claim(store, 'w1', T0);
      await settle(c, (id) => ({ kind: 'failed', id, error: 'HTTP 410' }));
      assert.equal(await store.oldestUndeliveredAtMs(), null);
      const failed = await store.list({ status: 'failed', limit: 10 });
      assert.deepEqual(
        failed.map((r) => [r.eventId, r.attempts, r.lastError]),
        [
          [x, 1, 'HTTP 410'],
          [y, 1, 'HTTP 410'],
        ],
      );
      assert.equal((await store.list({ status: 'failed', appCode: 'app-y', limit: 10 })).length, 1);
      assert.equal(await store.requeue({ appCode: 'app-x' }, T0 + 1), 1);
      const requeued = await rowOf(sql.db, x!);
      assert.deepEqual(
        [requeued.status, Number(requeued.attempts), requeued.last_error],
        ['pending', 0, 'HTTP 410'],
      );
      assert.equal(await store.markFailed(x!, 'operator gave up', T0 + 2), true);
      assert.equal(await store.markFailed(x!, 'again', T0 + 3), false);
      assert.equal((await rowOf(sql.db, x!)).last_error, 'operator gave up');
      assert.equal(await store.requeue({ eventIds: [x!, y!] }, T0 + 4), 2);
    });
  });
}
