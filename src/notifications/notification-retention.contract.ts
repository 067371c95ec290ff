/**
 * Retention of notifications on SQLite and on MariaDB (two pools sweeping at once there):
 * what is deleted by age and by the per-recipient cap, what never is, in bounded batches,
 * through an index, and the centre's list and unread count agreeing with what is left.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import type { SqlBackend } from '../adapters/sql/database.js';
import {
  expiredIdsQuery,
  sqlNotificationRetentionStore,
} from '../adapters/sql/notifications/notification-retention.js';
import { SqlNotificationStore } from '../adapters/sql/notifications/sql-notification-store.js';
import { silentLogger, type TestBackend } from '../cell/testing/harness.js';
import { NotificationCentre } from './notification-centre.js';
import {
  NotificationRetention,
  type NotificationRetentionConfig,
  type NotificationRetentionStore,
} from './notification-retention.js';

const T0 = 1_700_000_000_000;
const DAY = 86_400_000;
const RETENTION = 30 * DAY;

export function notificationRetentionContract(
  name: string,
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe(`notification retention (${name})`, { skip: options.skip ?? false }, () => {
    let backend: TestBackend;
    let sql: SqlBackend;
    /** One store per node (its own pool on MariaDB). */
    let nodes: NotificationRetentionStore[];
    const clock = { nowMs: () => T0 };
    const retention = (
      config: Partial<NotificationRetentionConfig> = {},
      store: NotificationRetentionStore = nodes[0]!,
    ) =>
      new NotificationRetention(
        { retentionMs: RETENTION, maxPerUser: 0, ...config },
        { store, clock, logger: silentLogger },
      );
    const centre = () =>
      new NotificationCentre({
        store: new SqlNotificationStore(sql),
        push: { toUser: () => undefined },
        clock,
        logger: silentLogger,
      });

    /** `count` notifications to one recipient, created `ageMs` before T0; their ids. */
    const seed = async (userId: string, ageMs: number, count = 1, app = 'default') => {
      const rows = Array.from({ length: count }, (_, i) => ({
        userId,
        type: 'meeting_invite',
        title: `age ${ageMs} #${i}`,
        content: '',
        extra: '{}',
      }));
      const stored = await new SqlNotificationStore(sql).insertBatch(app, rows, T0 - ageMs);
      return stored.map((r) => r.id);
    };
    const idsOf = async (userId: string, app = 'default') =>
      (
        await sql.db
          .selectFrom('notifications')
          .select('id')
          .where('app_code', '=', app)
          .where('user_id', '=', userId)
          .orderBy('id')
          .execute()
      ).map((r) => Number(r.id));
    const total = async () =>
      Number(
        (
          await sql.db
            .selectFrom('notifications')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** What a client sees: every page of the list (2 a page) and the unread count. */
    const seen = async (userId: string, app = 'default') => {
      const c = centre();
      const ids: number[] = [];
      let beforeId: number | null = null;
      for (;;) {
        const page = await c.list(app, userId, { beforeId, limit: 2 });
        ids.push(...page.list.map((n) => n.id));
        if (!page.has_more) break;
        beforeId = page.list[page.list.length - 1]!.id;
      }
      return { ids, unread: await c.unreadCount(app, userId) };
    };

    before(async () => {
      backend = await openBackend();
      sql = backend.inspect;
      nodes = [
        sqlNotificationRetentionStore((await backend.sqlForHost()).db),
        sqlNotificationRetentionStore((await backend.sqlForHost()).db),
      ];
    });
    beforeEach(async () => {
      await sql.db.deleteFrom('notifications').execute();
    });
    after(async () => {
      await backend?.close();
    });

    it('deletes notifications older than the retention and keeps newer ones; list and unread count agree', async () => {
      const old = [...(await seed('11', RETENTION + 1, 3)), ...(await seed('12', 400 * DAY))];
      const kept11 = [
        ...(await seed('11', RETENTION)), // exactly the retention: not older
        ...(await seed('11', DAY, 2)),
      ];
      const kept12 = await seed('12', 0);
      // Read ones too: age alone decides.
      const c = centre();
      await c.markRead('default', '11', old[0]!);
      await c.markRead('default', '11', kept11[1]!);
      assert.deepEqual(await seen('11'), {
        ids: [...old.slice(0, 3), ...kept11].reverse(),
        unread: 4,
      });

      assert.equal(await retention({ retentionMs: 0 }).sweep(), 0, '0 keeps them');
      assert.equal(await total(), 8);
      assert.equal(await retention().sweep(), 4);
      assert.deepEqual(await idsOf('11'), kept11);
      assert.deepEqual(await idsOf('12'), kept12);
      assert.deepEqual(await seen('11'), { ids: [...kept11].reverse(), unread: 2 });
      assert.deepEqual(await seen('12'), { ids: kept12, unread: 1 });
      assert.equal(await retention().sweep(), 0, 'nothing left to delete');
    });

    it('deletes in bounded batches; two nodes sweeping at once delete each row once', async () => {
      await seed('21', RETENTION + DAY, 7);
      const young = await seed('21', DAY);
      const small = { batchSize: 2, maxBatchesPerSweep: 1 };
      const [a, b] = await Promise.all([
        retention(small, nodes[0]).sweep(),
        retention(small, nodes[1]).sweep(),
      ]);
      assert.ok(a <= 2 && b <= 2 && a + b >= 2, `bounded batches: ${a} + ${b}`);
      assert.equal(await total(), 8 - a - b, 'each deleted row counted once');
      // The rest over several sweeps of at most 2 DELETEs of 2 rows.
      const node = retention({ batchSize: 2, maxBatchesPerSweep: 2 });
      let sweeps = 0;
      while ((await idsOf('21')).length > 1) {
        assert.ok((await node.sweep()) <= 4);
        assert.ok(++sweeps < 10, 'converges');
      }
      assert.deepEqual(await idsOf('21'), young);
    });

    it('keeps only the newest maxPerUser of each recipient (per app); list and unread count agree', async () => {
      const a = await seed('31', DAY, 7);
      const b = await seed('32', DAY, 2);
      const elsewhere = await seed('31', DAY, 4, 'other_app');
      await centre().markRead('default', '31', a[6]!);
      const cap = retention({ retentionMs: 0, maxPerUser: 3 });
      assert.equal(await cap.sweep(), 4 + 1);
      assert.deepEqual(await idsOf('31'), a.slice(4));
      assert.deepEqual(await idsOf('32'), b);
      assert.deepEqual(await idsOf('31', 'other_app'), elsewhere.slice(1));
      assert.deepEqual(await seen('31'), { ids: a.slice(4).reverse(), unread: 2 });
      assert.equal(await cap.sweep(), 0, 'within the cap now');
      // New notifications bring the recipient past the cap again: the next sweep sees them.
      const more = await seed('31', 0, 2);
      assert.equal(await cap.sweep(), 2);
      assert.deepEqual(await idsOf('31'), [a[6]!, ...more]);
      assert.deepEqual(await idsOf('32'), b);
      assert.deepEqual(await seen('31'), { ids: [...more].reverse().concat(a[6]!), unread: 2 });
    });

    it('a cap sweep out of budget resumes where it stopped', async () => {
      const a = await seed('41', DAY, 9);
      const b = await seed('42', DAY, 5);
      // Per sweep: one scan and one DELETE of at most 2 rows.
      const cap = retention({ retentionMs: 0, maxPerUser: 2, batchSize: 2, maxBatchesPerSweep: 2 });
      let sweeps = 0;
      while ((await idsOf('41')).length > 2 || (await idsOf('42')).length > 2) {
        assert.ok((await cap.sweep()) <= 2, 'bounded');
        assert.ok(++sweeps < 20, 'converges');
      }
      assert.deepEqual(await idsOf('41'), a.slice(7));
      assert.deepEqual(await idsOf('42'), b.slice(3));
    });

    it('age and cap together; a fresh node checks every recipient once', async () => {
      const a = await seed('51', RETENTION + DAY, 2);
      const b = await seed('51', DAY, 4);
      const both = retention({ maxPerUser: 3 });
      assert.equal(await both.sweep(), 3);
      assert.deepEqual(await idsOf('51'), b.slice(1), `${a.join(',')} expired, ${b[0]} capped`);
      // Another node's first sweep starts from the beginning: a stricter cap there applies.
      assert.equal(await retention({ maxPerUser: 1 }, nodes[1]).sweep(), 2);
      assert.deepEqual(await idsOf('51'), b.slice(3));
    });

    it('picks expired rows through the created_at_ms index', async () => {
      await seed('61', RETENTION + DAY, 3);
      // The very statement the sweep runs, explained by the database.
      const query = expiredIdsQuery(sql.db, T0 - RETENTION, 500).compile();
      const explain = sql.flavor === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN ';
      const plan = await sql.db.executeQuery<Record<string, string | number | null>>(
        CompiledQuery.raw(explain + query.sql, [...query.parameters]),
      );
      const text = JSON.stringify(plan.rows);
      if (sql.flavor === 'sqlite') {
        // e.g. "SEARCH notifications USING COVERING INDEX notifications_created (created_at_ms<?)"
        assert.ok(
          plan.rows.some((r) =>
            /USING (COVERING )?INDEX notifications_created/.test(String(r.detail)),
          ),
          text,
        );
      } else {
        const row = plan.rows[0] ?? {};
        assert.match(String(row.possible_keys ?? ''), /notifications_created/, text);
        assert.notEqual(row.type, 'ALL', `not a full scan: ${text}`);
      }
    });
  });
}
