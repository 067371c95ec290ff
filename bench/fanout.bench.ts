/**
 * `npm run bench:fanout`: realtime fan-out against a bare `ws` broadcast, and outbox
 * throughput.
 *
 * Ours: one node in this process (cell host with the counter kind, realtime publisher,
 * WebSocket hub on loopback HTTP), on MariaDB + Redis when they answer (commit → Redis
 * pub/sub → hub), else on SQLite + the in-process bus. The baseline: a bare `ws` server in
 * this process broadcasting the same frame bytes with one `send` per client and nothing
 * behind it (bench/fanout-stack.ts). Each has its own child process of BENCH_CLIENTS
 * (2,000) WebSocket clients (bench/fanout-clients.ts) following one room.
 *
 * 1. 20 room events/s for BENCH_FANOUT_SECONDS (30) on ours: frames/s delivered, p50/p99
 *    from COMMIT to the client's receipt (one clock: both processes on this machine).
 * 2. The highest sustained rate of each (every frame arrived, no client dropped, p99 under
 *    100 ms): rates doubling, then a bisection, BENCH_STEP_SECONDS (5) per step, ours and
 *    the baseline back to back at each step. ratio = ours / bare.
 * 3. The outbox relay delivering BENCH_OUTBOX_EVENTS (20,000) events of 200 rooms to a
 *    local webhook (in a child process): events/s.
 *
 * The last lines are machine-readable.
 */
import type { ChildProcess } from 'node:child_process';
import type { CellKey } from '../src/cell/lease.js';
import { silentLogger } from '../src/cell/testing/harness.js';
import { DestinationPolicy } from '../src/outbox/destinations.js';
import { OutboxRelay } from '../src/outbox/relay.js';
import { SqlOutboxStore } from '../src/outbox/sql-outbox-store.js';
import { WebhookSink, webhookSinks } from '../src/outbox/webhook-sink.js';
import { SqlWebhookDirectory } from '../src/outbox/webhooks.js';
import { systemClock } from '../src/shared/clock.js';
import { mariadbAvailable, redisAvailable } from '../src/testing/backends.js';
import { highestSustained, phase, ask, startClients } from './fanout-phase.js';
import { counter, now, openBareBroadcast, openStack, type Stack } from './fanout-stack.js';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 2_000);
const BASE_RATE = 20;
const BASE_SECONDS = Number(process.env.BENCH_FANOUT_SECONDS ?? 30);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 5);
const OUTBOX_EVENTS = Number(process.env.BENCH_OUTBOX_EVENTS ?? 20_000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const cluster = (await mariadbAvailable()) && (await redisAvailable());
  const stack = await openStack(cluster);
  const bare = await openBareBroadcast(await stack.sampleFrame());
  const children: ChildProcess[] = [];
  try {
    console.log(
      `fan-out bench on ${cluster ? 'MariaDB + Redis' : 'SQLite + in-process bus'}: ${CLIENTS} WebSocket clients (separate process) on one room, against a bare ws broadcast`,
    );
    const ours = await startClients(stack.wsUrl, CLIENTS, stack.room.roomId);
    const baseline = await startClients(bare.wsUrl, CLIENTS, stack.room.roomId);
    children.push(ours.child, baseline.child);
    console.log(
      `clients connected and subscribed: ours ${ours.ok} (failed ${ours.failed}), bare ${baseline.ok} (failed ${baseline.failed})`,
    );

    await phase(stack, ours.child, CLIENTS, BASE_RATE, 3); // warm-up (JIT, connections)
    await phase(bare, baseline.child, CLIENTS, BASE_RATE, 3);
    const base = await phase(stack, ours.child, CLIENTS, BASE_RATE, BASE_SECONDS);
    console.log(
      `20 events/s x ${BASE_SECONDS}s: ${base.framesPerS.toFixed(0)} frames/s delivered, commit-to-client p50 ${base.p50Ms.toFixed(1)} ms p99 ${base.p99Ms.toFixed(1)} ms, lost ${base.lost}, dropped clients ${base.dropped}`,
    );

    const [top, topBare] = await highestSustained(
      [
        { target: stack, child: ours.child },
        { target: bare, child: baseline.child },
      ],
      CLIENTS,
      BASE_RATE * 2,
      STEP_SECONDS,
    );
    console.log(
      `highest sustained rate: ours ${top!.rate} events/s (${top!.rate * CLIENTS} frames/s, p99 ${top!.result?.p99Ms.toFixed(1) ?? '–'} ms), ` +
        `bare ws ${topBare!.rate} events/s (${topBare!.rate * CLIENTS} frames/s, p99 ${topBare!.result?.p99Ms.toFixed(1) ?? '–'} ms)`,
    );

    const outbox = await outboxThroughput(stack, ours.child);
    console.log(`fanout_events_per_s=${top!.rate}`);
    console.log(`fanout_frames_per_s=${top!.rate * CLIENTS}`);
    console.log(`fanout_bare_events_per_s=${topBare!.rate}`);
    console.log(`ratio_fanout_vs_bare_ws=${(top!.rate / topBare!.rate).toFixed(3)}`);
    console.log(`fanout_p99_ms=${base.p99Ms.toFixed(1)}`);
    console.log(`outbox_events_per_s=${outbox.toFixed(0)}`);
  } finally {
    for (const child of children) child.send({ type: 'exit' });
    await bare.close();
    await stack.close();
  }
}

/** Delivers OUTBOX_EVENTS events of 200 rooms to a webhook in the child: events/s. */
async function outboxThroughput(stack: Stack, child: ChildProcess): Promise<number> {
  const { port } = await ask<{ port: number }>(child, { type: 'webhook' }, 'webhook');
  const db = stack.sql.db;
  // The fan-out rooms' events have no webhook: out of the way.
  await db.updateTable('room_outbox').set({ status: 'delivered' }).execute();
  const directory = new SqlWebhookDirectory(stack.sql);
  await directory.put(
    'hook',
    { url: `http://127.0.0.1:${port}/events`, secret: 'bench-webhook-secret' },
    Date.now(),
  );
  const rooms: CellKey[] = Array.from({ length: 200 }, (_, i) => ({
    appCode: 'hook',
    roomId: `h${i}`,
  }));
  const perRoom = Math.ceil(OUTBOX_EVENTS / rooms.length);
  await Promise.all(
    rooms.map(async (room) => {
      for (let i = 0; i < perRoom; i++) {
        await stack.host.execute(counter, room, { type: 'Add', amount: 1 });
      }
    }),
  );
  const events = rooms.length * perRoom;
  // The bench's consumer is on loopback: allow it (webhooks refuse loopback by default).
  const sink = new WebhookSink({
    timeoutMs: 5_000,
    destinations: new DestinationPolicy(['127.0.0.1']),
  });
  const relay = new OutboxRelay(
    {
      // Throughput is bounded by requests in flight (each room is sent in order, one at a
      // time): a larger batch and more concurrency than the defaults (200 / 32).
      batchSize: 1_000,
      concurrency: 128,
      pollMs: 50,
      lockMs: 60_000,
      requestTimeoutMs: 5_000,
      retry: { baseMs: 100, maxMs: 1_000, maxAttempts: 10 },
    },
    {
      store: new SqlOutboxStore(stack.sql),
      sinks: webhookSinks(directory, sink),
      clock: systemClock,
      logger: silentLogger,
      nodeId: 'bench',
    },
  );
  const started = now();
  relay.start();
  for (;;) {
    const row = await db
      .selectFrom('room_outbox')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('app_code', '=', 'hook')
      .where('status', '<>', 'delivered')
      .executeTakeFirstOrThrow();
    if (Number(row.n) === 0) break;
    await sleep(50);
  }
  const seconds = (now() - started) / 1000;
  await relay.stop();
  sink.close();
  console.log(
    `outbox: ${events} events of ${rooms.length} rooms delivered to a local webhook in ${seconds.toFixed(2)} s`,
  );
  return events / seconds;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
