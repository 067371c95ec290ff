/**
 * The relay end to end against a real HTTP consumer, on SQLite and on MariaDB (each
 * relay with its own pool there, like separate nodes): retries, dead letters, several
 * workers, a worker that dies mid-request, per-room order under failures, apps without a
 * webhook and a webhook set on another node. The consumer listens on 127.0.0.1, which
 * webhooks may reach only when allow-listed (ROOMS_WEBHOOK_ALLOW_PRIVATE): these relays
 * allow exactly that address.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { eventually, silentLogger, startHost } from '../cell/testing/harness.js';
import type { TestBackend, TestHost } from '../cell/testing/harness.js';
import { room, runLocal } from '../cell/testing/routing.js';
import { systemClock } from '../shared/clock.js';
import { DestinationPolicy } from './destinations.js';
import { NO_SINK_REASON, OutboxRelay, type RelayConfig } from './relay.js';
import { SqlOutboxStore } from './sql-outbox-store.js';
import { insertEvents, interleavedRooms, rowOf } from './testing/outbox-rows.js';
import { WebhookConsumer } from './testing/webhook-consumer.js';
import { NO_CROWD_EVENTS_REASON, WebhookSink, webhookSinks } from './webhook-sink.js';
import { SqlWebhookDirectory } from './webhooks.js';

const SECRET = 'test-webhook-secret-0123456789';
/**
 * Short polls and retries; a request timeout far above any answer time, since a timeout
 * is an unknown outcome that is rightly retried (a busy test machine must not cause one).
 */
const FAST: RelayConfig = {
  batchSize: 50,
  concurrency: 8,
  pollMs: 20,
  lockMs: 20_000,
  requestTimeoutMs: 5_000,
  retry: { baseMs: 20, maxMs: 80, maxAttempts: 6 },
};

export function relayContract(
  openBackend: () => Promise<TestBackend>,
  options: { skip?: string | false } = {},
): void {
  describe('outbox relay', { skip: options.skip ?? false }, () => {
    let backend: TestBackend;
    let consumer: WebhookConsumer;
    const relays: OutboxRelay[] = [];
    const sinks: WebhookSink[] = [];
    const hosts: TestHost[] = [];

    /** A relay on its own node (its own pool on MariaDB), wired as a node wires it. */
    const startRelay = async (
      config: Partial<RelayConfig> = {},
      secret: string | null = SECRET,
    ) => {
      const sql = await backend.sqlForHost();
      const directory = new SqlWebhookDirectory(sql);
      if (secret !== null)
        await directory.put('default', { url: consumer.url, secret }, Date.now());
      const sink = new WebhookSink({
        timeoutMs: config.requestTimeoutMs ?? FAST.requestTimeoutMs,
        destinations: new DestinationPolicy(['127.0.0.1']),
      });
      sinks.push(sink);
      const relay = new OutboxRelay(
        { ...FAST, ...config },
        {
          store: new SqlOutboxStore(sql),
          sinks: webhookSinks(directory, sink),
          clock: systemClock,
          logger: silentLogger,
          nodeId: `relay${relays.length + 1}`,
        },
      );
      relays.push(relay);
      relay.start();
      return { relay, sink, directory };
    };
    const row = (eventId: string) => rowOf(backend.inspect.db, eventId);
    const allRows = () =>
      backend.inspect.db.selectFrom('room_outbox').selectAll().orderBy('id').execute();

    before(async () => {
      backend = await openBackend();
    });
    beforeEach(async () => {
      await backend.inspect.db.deleteFrom('room_outbox').execute();
      await backend.inspect.db
        .withTables<{ app_webhooks: { app_code: string } }>()
        .deleteFrom('app_webhooks')
        .execute();
      consumer = await new WebhookConsumer(SECRET).start();
    });
    afterEach(async () => {
      await Promise.all(relays.splice(0).map((r) => r.abort()));
      for (const s of sinks.splice(0)) s.close();
      for (const h of hosts.splice(0)) await h.kill();
      await consumer.close();
    });
    after(async () => {
      await backend?.close();
    });

    it('a webhook answering 500 twice then 200: delivered with attempts = 3, last_error kept until then', async () => {
      consumer.respond = (_r, nth) => (nth <= 2 ? 500 : 200);
      const [id] = await insertEvents(backend.inspect.db, [{ roomId: 'r500', version: 1 }]);
      const envelope = (await row(id!)).envelope;
      // Slow retries so the test sees the retryable row between attempts.
      await startRelay({ retry: { baseMs: 400, maxMs: 400, maxAttempts: 6 } });
      const retrying = await eventually(async () => {
        const r = await row(id!);
        return r.status === 'retryable' && r;
      });
      assert.equal(Number(retrying.attempts), 1);
      // The status and its standard phrase: never what the consumer wrote in the body.
      assert.equal(retrying.last_error, 'HTTP 500 Internal Server Error');
      assert.equal(retrying.envelope, envelope);
      assert.ok(
        Number(retrying.next_attempt_at_ms) > Number(retrying.updated_at_ms),
        'a retry is scheduled in the future',
      );
      const done = await eventually(async () => {
        const r = await row(id!);
        return r.status === 'delivered' && r;
      }, 10_000);
      assert.equal(Number(done.attempts), 3);
      assert.equal(done.last_error, 'HTTP 500 Internal Server Error');
      assert.equal(done.envelope, envelope);
      assert.deepEqual(
        consumer.received.map((r) => [r.attemptHeader, r.signatureOk, r.status]),
        [
          ['1', true, 500],
          ['2', true, 500],
          ['3', true, 200],
        ],
      );
      // The body is the stored envelope, byte for byte.
      assert.deepEqual(consumer.received[2]!.envelope, JSON.parse(envelope));
    });

    it('a 400 fails the event at once; 408 and 429 are retried', async () => {
      const [bad, later] = await insertEvents(backend.inspect.db, [
        { roomId: 'r400', version: 1 },
        { roomId: 'r429', version: 1 },
      ]);
      consumer.respond = (r, nth) => {
        if (r.envelope.event_id === bad) return 400;
        return nth <= 3 ? (nth % 2 === 0 ? 429 : 408) : 204;
      };
      await startRelay();
      const failed = await eventually(async () => {
        const r = await row(bad!);
        return r.status === 'failed' && r;
      });
      assert.deepEqual([Number(failed.attempts), failed.last_error], [1, 'HTTP 400 Bad Request']);
      const delivered = await eventually(async () => {
        const r = await row(later!);
        return r.status === 'delivered' && r;
      });
      assert.ok(Number(delivered.attempts) >= 2, `attempts ${delivered.attempts}`);
    });

    it('gives up after max attempts, and an app without a webhook sends nothing and says so', async () => {
      consumer.respond = () => 503;
      const [flaky] = await insertEvents(backend.inspect.db, [{ roomId: 'r503', version: 1 }]);
      const [quiet] = await insertEvents(backend.inspect.db, [
        { roomId: 'q', version: 1, appCode: 'no-hook' },
      ]);
      await startRelay({ retry: { baseMs: 10, maxMs: 20, maxAttempts: 3 } });
      const failed = await eventually(async () => {
        const r = await row(flaky!);
        return r.status === 'failed' && r;
      });
      assert.deepEqual(
        [Number(failed.attempts), failed.last_error],
        [3, 'HTTP 503 Service Unavailable'],
      );
      // Never sent, so never `delivered`: skipped, with the reason.
      const dropped = await eventually(async () => {
        const r = await row(quiet!);
        return r.status !== 'pending' && r.status !== 'delivering' && r;
      });
      assert.deepEqual(
        [dropped.status, Number(dropped.attempts), dropped.last_error],
        ['skipped', 0, NO_SINK_REASON],
      );
      assert.ok(consumer.received.every((r) => r.envelope.app_code === 'default'));
    });

    it('a webhook set without crowd events: those are skipped, the room’s others delivered in order', async () => {
      const crowd = { in_crowd: true, online_count: 201 };
      const ids = await insertEvents(backend.inspect.db, [
        { roomId: 'big', version: 1, type: 'UserJoined' },
        { roomId: 'big', version: 2, type: 'UserJoined', data: crowd },
        { roomId: 'big', version: 3, type: 'MicTakenUp' },
        { roomId: 'big', version: 4, type: 'UserLeft', data: crowd },
      ]);
      // Set before the relay starts: an event claimed before would be skipped as having no sink.
      const directory = new SqlWebhookDirectory(await backend.sqlForHost());
      const setting = { url: consumer.url, secret: SECRET, crowdEvents: false };
      await directory.put('default', setting, Date.now());
      await startRelay({}, null);
      const settled = await eventually(async () => {
        const rows = await Promise.all(ids.map((id) => row(id)));
        return rows.every((r) => r.status === 'delivered' || r.status === 'skipped') && rows;
      });
      assert.deepEqual(
        settled.map((r) => [r.status, r.last_error]),
        [
          ['delivered', null],
          ['skipped', NO_CROWD_EVENTS_REASON],
          ['delivered', null],
          ['skipped', NO_CROWD_EVENTS_REASON],
        ],
      );
      assert.deepEqual(
        consumer.received.map((r) => r.envelope.room_version),
        [1, 3],
      );
      // Set again with them: later crowd events are sent.
      await directory.put('default', { url: consumer.url, secret: SECRET }, Date.now());
      const [later] = await insertEvents(backend.inspect.db, [
        { roomId: 'big', version: 5, type: 'UserJoined', data: crowd },
      ]);
      await eventually(async () => (await row(later!)).status === 'delivered');
    });

    it('a consumer with another secret rejects the signature (401): the event fails', async () => {
      const [id] = await insertEvents(backend.inspect.db, [{ roomId: 'sig', version: 1 }]);
      await startRelay({}, 'a-different-secret-than-the-consumer');
      const failed = await eventually(async () => {
        const r = await row(id!);
        return r.status === 'failed' && r;
      });
      assert.equal(failed.last_error, 'HTTP 401 Unauthorized');
      assert.deepEqual(
        consumer.received.map((r) => [r.signatureOk, r.status]),
        [[false, 401]],
      );
    });

    it('two workers on one table never deliver the same event at the same time', async () => {
      consumer.respond = () =>
        new Promise((resolve) => setTimeout(() => resolve(200), Math.random() * 4));
      // Small batches, so that both workers find work.
      const [a, b] = [await startRelay({ batchSize: 8 }), await startRelay({ batchSize: 8 })];
      const ids = await insertEvents(backend.inspect.db, interleavedRooms(20, 10, 'two'));
      for (const r of relays) r.nudge();
      const rows = await eventually(async () => {
        const all = await allRows();
        return all.every((r) => r.status === 'delivered') && all;
      }, 15_000);
      assert.deepEqual(consumer.violations, []);
      assert.equal(consumer.deliveredIds().size, ids.length);
      assert.deepEqual(
        rows.filter((r) => Number(r.attempts) !== 1),
        [],
        'an event took more than one attempt',
      );
      // Both took part, and nothing was sent twice.
      const workers = new Set(rows.map((r) => r.worker_id));
      assert.deepEqual(workers, new Set([a.relay.workerId, b.relay.workerId]));
      assert.equal(consumer.received.length, ids.length);
    });

    it('a worker killed while delivering: the event is claimed again after lock_until_ms and delivered', async () => {
      const [id] = await insertEvents(backend.inspect.db, [{ roomId: 'crash', version: 1 }]);
      let releaseFirst: (status: number) => void = () => undefined;
      consumer.respond = (_r, nth) =>
        nth === 1 ? new Promise<number>((resolve) => (releaseFirst = resolve)) : 200;
      const lockMs = 1_500;
      const requestTimeoutMs = 1_000;
      const first = await startRelay({ lockMs, requestTimeoutMs });
      await eventually(() => consumer.received.length === 1);
      const held = await row(id!);
      assert.deepEqual([held.status, held.worker_id], ['delivering', first.relay.workerId]);
      // The process dies: nothing settled, its connection gone.
      await first.relay.abort();
      first.sink.close();
      releaseFirst(200);
      const second = await startRelay({ lockMs, requestTimeoutMs });
      const done = await eventually(async () => {
        const r = await row(id!);
        return r.status === 'delivered' && r;
      }, 10_000);
      assert.equal(done.worker_id, second.relay.workerId);
      assert.equal(Number(done.attempts), 1, 'the dead worker recorded nothing');
      assert.equal(consumer.received.length, 2);
      assert.ok(
        consumer.received[1]!.receivedAtMs >= Number(held.lock_until_ms),
        'claimed again before the lock expired',
      );
    });

    it('a webhook set on one node applies at once on another: events committed right after are delivered there', async () => {
      // Node B runs the relay and has already found that the app has no webhook.
      const b = await startRelay({}, null);
      const [before] = await insertEvents(backend.inspect.db, [{ roomId: 'late', version: 1 }]);
      b.relay.nudge();
      const skipped = await eventually(async () => {
        const r = await row(before!);
        return r.status === 'skipped' && r;
      });
      assert.equal(Number(skipped.attempts), 0);
      // Node A (its own connection; no relay) sets the webhook, then events are committed.
      const nodeA = new SqlWebhookDirectory(await backend.sqlForHost());
      await nodeA.put('default', { url: consumer.url, secret: SECRET }, Date.now());
      const after = await insertEvents(backend.inspect.db, [
        { roomId: 'late', version: 2 },
        { roomId: 'late-2', version: 1 },
      ]);
      b.relay.nudge();
      const rows = await eventually(async () => {
        const all = await Promise.all(after.map(row));
        return all.every((r) => r.status !== 'pending' && r.status !== 'delivering') && all;
      });
      assert.deepEqual(
        rows.map((r) => [r.status, Number(r.attempts), r.worker_id]),
        after.map(() => ['delivered', 1, b.relay.workerId]),
      );
      assert.deepEqual(new Set(consumer.acked), new Set(after));
      // And removed on A: B stops sending at once; the event is skipped, not delivered.
      await nodeA.delete('default');
      const [removed] = await insertEvents(backend.inspect.db, [{ roomId: 'late', version: 3 }]);
      b.relay.nudge();
      const last = await eventually(async () => {
        const r = await row(removed!);
        return r.status !== 'pending' && r.status !== 'delivering' && r;
      });
      assert.equal(last.status, 'skipped');
      assert.equal(consumer.received.length, after.length);
    });

    it('keeps each room in room_version order with three workers and injected failures', async () => {
      // 500s, 503s, 429s and dropped connections (outcome unknown) on a third of requests.
      consumer.respond = () => {
        const dice = Math.random();
        if (dice < 0.1) return 500;
        if (dice < 0.2) return 0;
        if (dice < 0.25) return 503;
        if (dice < 0.3) return 429;
        return new Promise((resolve) => setTimeout(() => resolve(200), Math.random() * 3));
      };
      // Enough attempts that no event runs out of them (0.3^50).
      const retry = { baseMs: 10, maxMs: 40, maxAttempts: 50 };
      await Promise.all([startRelay({ retry }), startRelay({ retry }), startRelay({ retry })]);
      // Events are committed by a real cell host while the relays run.
      const host = await startHost(backend);
      hosts.push(host);
      const rooms = Array.from({ length: 8 }, (_, i) => room(`ord-${i}`));
      await Promise.all(
        rooms.map(async (key) => {
          for (let i = 0; i < 12; i++) await runLocal(host.host, key, { type: 'Add', amount: 1 });
        }),
      );
      const total = rooms.length * 12;
      const rows = await eventually(async () => {
        const all = await allRows();
        return all.length === total && all.every((r) => r.status === 'delivered') && all;
      }, 20_000);
      assert.equal(consumer.deliveredIds().size, total);
      const order = new Map<string, string[]>();
      for (const r of rows) order.set(r.room_id, [...(order.get(r.room_id) ?? []), r.event_id]);
      for (const [roomId, ids] of order) {
        const versions = rows
          .filter((r) => r.room_id === roomId)
          .map((r) => Number(r.room_version));
        assert.deepEqual(
          versions,
          [...versions].sort((x, y) => x - y),
          `ids follow versions`,
        );
        assert.equal(ids.length, 12);
      }
      assert.deepEqual(consumer.orderViolations(order), []);
      assert.deepEqual(consumer.violations, []);
      assert.ok(
        consumer.received.length > total,
        'no failure was injected: the test proved nothing',
      );
    });
  });
}
