/**
 * The replay's log after outbox retention, on SQLite and on MariaDB. Retention deletes by
 * status and age, not oldest first: a delivered row older than the dead letters around it
 * goes first. A replay must then answer refetch rather than skip it, from any anchor at or
 * below a deleted row (by event or by version); an anchor above every deleted row, and a
 * version whose command sent no event at all, still replay.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { SqlBackend } from './database.js';
import { silentLogger, type TestBackend } from '../../cell/testing/harness.js';
import { OutboxRetention } from '../../outbox/retention.js';
import { SqlOutboxStore } from '../../outbox/sql-outbox-store.js';
import { insertEvents } from '../../outbox/testing/outbox-rows.js';
import { replayFrames, type ReplayFrom } from '../../realtime/frame-replay.js';
import { sqlRoomFrameLog } from './room-frame-log.js';

const T0 = 1_700_000_000_000;
const DAY = 24 * 3_600_000;

export function roomFrameLogContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('replay after outbox retention', { skip: options.skip ?? false }, () => {
    let backend: TestBackend;
    let db: SqlBackend['db'];
    let seq = 0;

    before(async () => {
      backend = await openBackend();
      db = backend.inspect.db;
    });
    after(async () => {
      await backend?.close();
    });

    /** A room with outbox rows at `versions` (one row per entry), all dead letters. */
    const room = async (versions: readonly number[]) => {
      const key = { appCode: 'default', roomId: `replay-hole-${++seq}-${Date.now()}` };
      await sql`INSERT INTO room_cells (app_code, room_id, kind, version, lease_epoch,
        snapshot_version, created_at_ms, updated_at_ms)
        VALUES (${key.appCode}, ${key.roomId}, 'counter', ${Math.max(...versions)}, 1, 0, 0, 0)`.execute(
        db,
      );
      const ids = await insertEvents(
        db,
        versions.map((version) => ({ roomId: key.roomId, version })),
        T0 - 10 * DAY,
      );
      // Dead letters: kept 30 days, far longer than the delivered rows' 7.
      await db
        .updateTable('room_outbox')
        .set({ status: 'failed', updated_at_ms: T0 - 10 * DAY })
        .where('event_id', 'in', ids)
        .execute();
      return { key, ids };
    };
    /** Marks `eventIds` delivered long ago, and runs the retention sweep. */
    const deliveredLongAgo = async (eventIds: readonly string[]) => {
      await db
        .updateTable('room_outbox')
        .set({ status: 'delivered', updated_at_ms: T0 - 8 * DAY })
        .where('event_id', 'in', [...eventIds])
        .execute();
      const store = new SqlOutboxStore(await backend.sqlForHost());
      const retention = new OutboxRetention(
        { settledMs: 7 * DAY, failedMs: 30 * DAY },
        { store, clock: { nowMs: () => T0 }, logger: silentLogger },
      );
      assert.equal(await retention.sweep(), eventIds.length);
    };
    const replay = (key: { appCode: string; roomId: string }, from: ReplayFrom) =>
      replayFrames(sqlRoomFrameLog(db), new Map(), key, from);
    const idsOf = (answer: Awaited<ReturnType<typeof replay>>) =>
      'replay' in answer
        ? answer.replay.map((f) => (f as { data: { event_id: string } }).data.event_id)
        : 'refetch';

    it('a delivered row deleted between dead letters: refetch from any anchor below it, replay above', async () => {
      // Versions 1..6, two events at version 5; version 7 sent no event; then 8.
      const { key, ids } = await room([1, 2, 3, 4, 5, 5, 6, 8]);
      const [v1, v2, v3, v4, v5a, v5b, v6, v8] = ids as [string, ...string[]];
      // Before retention, every anchor replays what follows it.
      assert.deepEqual(idsOf(await replay(key, { eventId: v2! })), [v3, v4, v5a, v5b, v6, v8]);

      await deliveredLongAgo([v3!, v5b!]);
      for (const from of [
        { eventId: v1 },
        { eventId: v2! },
        { eventId: v5a! }, // the hole is its own version's second event
        { version: 1 },
        { version: 2 },
        { version: 3 }, // the deleted version itself: its anchor (2) is below the hole
        { version: 5 },
      ] satisfies ReplayFrom[]) {
        assert.equal(
          idsOf(await replay(key, from)),
          'refetch',
          `a replay from ${JSON.stringify(from)} skips a deleted event`,
        );
      }
      // Above every deleted row: exact anchors still replay, chained from the anchor.
      const fromV6 = await replay(key, { eventId: v6! });
      assert.deepEqual(idsOf(fromV6), [v8]);
      assert.equal(
        'replay' in fromV6 &&
          (fromV6.replay[0] as { data: { prev_event_id: string } }).data.prev_event_id,
        v6,
      );
      // Version 7 had no event at all: not a hole.
      assert.deepEqual(idsOf(await replay(key, { version: 6 })), [v8]);
      assert.deepEqual(idsOf(await replay(key, { version: 7 })), [v8]);
      assert.deepEqual(idsOf(await replay(key, { version: 8 })), []);
    });

    it('another room’s deletions do not stop a room’s replay', async () => {
      const pruned = await room([1, 2, 3]);
      const intact = await room([1, 2, 3]);
      await deliveredLongAgo([pruned.ids[1]!]);
      assert.equal(idsOf(await replay(pruned.key, { eventId: pruned.ids[0]! })), 'refetch');
      assert.deepEqual(idsOf(await replay(intact.key, { eventId: intact.ids[0]! })), [
        intact.ids[1],
        intact.ids[2],
      ]);
    });
  });
}
