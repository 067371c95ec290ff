/**
 * ROOMS_OUTBOX_GATHER_MS on a real store: a stream of commits, each nudging the relay,
 * is claimed a window at a time, not once per commit, and every event still settles. The
 * bound is the mechanism's own (claims at least a window apart), so a slow machine cannot
 * break it; a relay that claims on every nudge, as before the window, does. A claim that
 * came back full is followed at once (a backlog is not slowed).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { eventually, silentLogger, sqliteMemoryBackend } from '../cell/testing/harness.js';
import type { TestBackend } from '../cell/testing/harness.js';
import { systemClock } from '../shared/clock.js';
import type { OutboxStore } from './outbox-store.js';
import { OutboxRelay, type RelayConfig } from './relay.js';
import { SqlOutboxStore } from './sql-outbox-store.js';
import { insertEvents } from './testing/outbox-rows.js';

const BASE: RelayConfig = {
  batchSize: 50,
  concurrency: 8,
  pollMs: 5_000, // only nudges start a claim while the test runs
  lockMs: 20_000,
  requestTimeoutMs: 5_000,
  retry: { baseMs: 20, maxMs: 80, maxAttempts: 3 },
};

void describe('outbox relay: gathering claims', () => {
  let backend: TestBackend;
  before(async () => {
    backend = await sqliteMemoryBackend();
  });
  after(() => backend.close());

  /** 40 commits about 2 ms apart, each nudging: the claims taken and the ms they spanned. */
  async function burst(config: Partial<RelayConfig>, room: string) {
    const sql = await backend.sqlForHost();
    const inner = new SqlOutboxStore(sql);
    let claims = 0;
    const store: OutboxStore = Object.assign(Object.create(inner) as OutboxStore, {
      claim: (request: Parameters<OutboxStore['claim']>[0]) => {
        claims++;
        return inner.claim(request);
      },
    });
    // No webhook for the app: every event is settled as skipped, no request made.
    const relay = new OutboxRelay(
      { ...BASE, ...config },
      {
        store,
        sinks: (apps) => Promise.resolve(new Map(apps.map((a) => [a, null]))),
        clock: systemClock,
        logger: silentLogger,
      },
    );
    relay.start();
    try {
      await sleep(50); // the first claim, at start, finds nothing
      const before = claims;
      const started = performance.now();
      for (let v = 1; v <= 40; v++) {
        await insertEvents(sql.db, [{ roomId: room, version: v }]);
        relay.nudge();
        await sleep(2);
      }
      await eventually(async () => {
        const left = await sql.db
          .selectFrom('room_outbox')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('room_id', '=', room)
          .where('status', '!=', 'skipped')
          .executeTakeFirstOrThrow();
        return Number(left.n) === 0 || undefined;
      });
      return { claims: claims - before, ms: performance.now() - started };
    } finally {
      await relay.stop();
    }
  }

  void it('claims a window of commits at once, and settles every event', async () => {
    const gatherMs = 40;
    const gathered = await burst({ gatherMs }, 'gather-on');
    // At most one claim per window while the commits came and settled, plus the last one.
    const bound = Math.ceil(gathered.ms / gatherMs) + 1;
    assert.ok(
      gathered.claims <= bound,
      `${gathered.claims} claims in ${gathered.ms.toFixed(0)} ms (at most ${bound})`,
    );
  });

  void it('a backlog is not slowed: a full claim is followed at once', async () => {
    const sql = await backend.sqlForHost();
    await insertEvents(
      sql.db,
      Array.from({ length: 300 }, (_, i) => ({
        roomId: `backlog-${i % 30}`,
        version: 1 + Math.floor(i / 30),
      })),
    );
    const relay = new OutboxRelay(
      { ...BASE, batchSize: 20, gatherMs: 1_000 },
      {
        store: new SqlOutboxStore(sql),
        sinks: (apps) => Promise.resolve(new Map(apps.map((a) => [a, null]))),
        clock: systemClock,
        logger: silentLogger,
      },
    );
    relay.start();
    try {
      // 15 full claims of 20: with a 1 s pause between claims this would take 15 s.
      await eventually(async () => {
        const left = await sql.db
          .selectFrom('room_outbox')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('room_id', 'like', 'backlog-%')
          .where('status', '!=', 'skipped')
          .executeTakeFirstOrThrow();
        return Number(left.n) === 0 || undefined;
      }, 5_000);
    } finally {
      await relay.stop();
    }
  });
});
