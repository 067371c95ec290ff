/**
 * `npm run bench:fanout`: realtime fan-out and outbox throughput.
 *
 * One node in this process (cell host with the counter kind, realtime publisher, WebSocket
 * hub on loopback HTTP), on MariaDB + Redis when they answer (commit → Redis pub/sub →
 * hub), else on SQLite + the in-process bus. 2,000 WebSocket clients live in a child
 * process (bench/fanout-clients.ts), all following one room.
 *
 * 1. 20 room events/s for BENCH_FANOUT_SECONDS (30): frames/s delivered, p50/p99 latency
 *    from COMMIT to the client's receipt (one clock: both processes on this machine).
 * 2. Rising event rates for BENCH_STEP_SECONDS (5) each, then a bisection: the highest
 *    rate whose every frame arrived, no client was dropped, and p99 stayed under 100 ms.
 * 3. The outbox relay delivering BENCH_OUTBOX_EVENTS (20,000) events of 200 rooms to a
 *    local webhook (in the child process): events/s.
 *
 * The last three lines are machine-readable.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRedisClient } from '../src/adapters/redis/redis-client.js';
import { MemoryRealtimeBus } from '../src/adapters/memory/memory-bus.js';
import { MemoryLeaseManager } from '../src/adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../src/adapters/memory/memory-node-registry.js';
import { RedisRealtimeBus } from '../src/adapters/redis/redis-bus.js';
import { RedisLeaseManager } from '../src/adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../src/adapters/redis/redis-node-registry.js';
import { openSqlBackend, type SqlBackend } from '../src/adapters/sql/database.js';
import { SqlCellStore } from '../src/adapters/sql/sql-cell-store.js';
import { CellHost } from '../src/cell/host.js';
import type { CellKey } from '../src/cell/lease.js';
import { counterDomain } from '../src/cell/testing/counter-domain.js';
import { fastConfig, silentLogger } from '../src/cell/testing/harness.js';
import { WsHub } from '../src/edge/ws/hub.js';
import { DestinationPolicy } from '../src/outbox/destinations.js';
import { OutboxRelay } from '../src/outbox/relay.js';
import { SqlOutboxStore } from '../src/outbox/sql-outbox-store.js';
import { WebhookSink, webhookSinks } from '../src/outbox/webhook-sink.js';
import { SqlWebhookDirectory } from '../src/outbox/webhooks.js';
import type { RealtimeBus } from '../src/realtime/bus.js';
import { RealtimePublisher } from '../src/realtime/publisher.js';
import { systemClock } from '../src/shared/clock.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  mariadbAvailable,
  redisAvailable,
  testKeyPrefix,
  testRedisUrl,
} from '../src/testing/backends.js';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 2_000);
const BASE_RATE = 20;
const BASE_SECONDS = Number(process.env.BENCH_FANOUT_SECONDS ?? 30);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 5);
const OUTBOX_EVENTS = Number(process.env.BENCH_OUTBOX_EVENTS ?? 20_000);
const P99_LIMIT_MS = 100;
const counter = counterDomain();
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface PhaseResult {
  rate: number;
  committed: number;
  frames: number;
  framesPerS: number;
  p50Ms: number;
  p99Ms: number;
  lost: number;
  dropped: number;
  ok: boolean;
}

/** Request/answer over the child's IPC channel. */
function ask<T>(child: ChildProcess, message: object, answer: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: { type: string }) => {
      if (m.type !== answer) return;
      child.off('message', onMessage);
      resolve(m as T);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

async function main(): Promise<void> {
  const cluster = (await mariadbAvailable()) && (await redisAvailable());
  const stack = await openStack(cluster);
  const here = path.dirname(fileURLToPath(import.meta.url));
  const child = fork(path.join(here, 'fanout-clients.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    await new Promise<void>((resolve) => child.once('message', () => resolve()));
    console.log(
      `fan-out bench on ${cluster ? 'MariaDB + Redis' : 'SQLite + in-process bus'}: ${CLIENTS} WebSocket clients (separate process) on one room`,
    );
    const connected = await ask<{ ok: number; failed: number }>(
      child,
      { type: 'connect', url: stack.wsUrl, count: CLIENTS, roomId: stack.room.roomId },
      'connected',
    );
    console.log(`clients connected and subscribed: ${connected.ok} (failed ${connected.failed})`);

    await phase(stack, child, BASE_RATE, 3); // warm-up (JIT, connections), not reported
    const base = await phase(stack, child, BASE_RATE, BASE_SECONDS);
    console.log(
      `20 events/s x ${BASE_SECONDS}s: ${base.framesPerS.toFixed(0)} frames/s delivered, commit-to-client p50 ${base.p50Ms.toFixed(1)} ms p99 ${base.p99Ms.toFixed(1)} ms, lost ${base.lost}, dropped clients ${base.dropped}`,
    );

    let good = base.ok ? BASE_RATE : 0;
    let bad = Infinity;
    for (let rate = BASE_RATE * 2; rate <= 5_120 && bad === Infinity; rate *= 2) {
      const r = await phase(stack, child, rate, STEP_SECONDS);
      report(r);
      if (r.ok) good = rate;
      else bad = rate;
    }
    for (let i = 0; i < 3 && bad !== Infinity && bad - good > Math.max(5, good * 0.1); i++) {
      const rate = Math.round((good + bad) / 2);
      const r = await phase(stack, child, rate, STEP_SECONDS);
      report(r);
      if (r.ok) good = rate;
      else bad = rate;
    }
    console.log(`highest sustained rate: ${good} events/s (${good * CLIENTS} frames/s)`);

    const outbox = await outboxThroughput(stack, child);
    console.log(`fanout_events_per_s=${good}`);
    console.log(`fanout_p99_ms=${base.p99Ms.toFixed(1)}`);
    console.log(`outbox_events_per_s=${outbox.toFixed(0)}`);
  } finally {
    child.send({ type: 'exit' });
    await stack.close();
  }
}

function report(r: PhaseResult): void {
  console.log(
    `  ${String(r.rate).padStart(5)} events/s: ${r.framesPerS.toFixed(0).padStart(8)} frames/s, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, lost ${r.lost}, dropped ${r.dropped} -> ${r.ok ? 'sustained' : 'not sustained'}`,
  );
}

/** Commits `rate` events/s for `seconds` (open loop), waits for the frames, measures. */
async function phase(
  stack: Stack,
  child: ChildProcess,
  rate: number,
  seconds: number,
): Promise<PhaseResult> {
  await ask(child, { type: 'heal' }, 'healed');
  await ask(child, { type: 'phase' }, 'phase');
  stack.commits.clear();
  const total = Math.round(rate * seconds);
  const started = now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 1) await sleep(wait);
    pending.push(stack.host.execute(counter, stack.room, { type: 'Add', amount: 1 }));
  }
  await Promise.allSettled(pending);
  const lateMs = now() - started - seconds * 1000;
  // Frames still in flight: wait until they stop arriving (at most 5 s).
  let previous = -1;
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const r = await ask<{ frames: number }>(child, { type: 'report', commits: [] }, 'report');
    if (r.frames === previous && r.frames >= stack.commits.size * CLIENTS) break;
    previous = r.frames;
  }
  const r = await ask<{ frames: number; p50Ms: number; p99Ms: number; open: number }>(
    child,
    { type: 'report', commits: [...stack.commits] },
    'report',
  );
  const committed = stack.commits.size;
  const lost = committed * CLIENTS - r.frames;
  const dropped = CLIENTS - r.open;
  return {
    rate,
    committed,
    frames: r.frames,
    framesPerS: r.frames / seconds,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    lost,
    dropped,
    // The commits kept the pace, every frame arrived, nobody was dropped, p99 in budget.
    ok:
      committed === total && lateMs < 500 && lost === 0 && dropped === 0 && r.p99Ms < P99_LIMIT_MS,
  };
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
    `http://127.0.0.1:${port}/events`,
    'bench-webhook-secret',
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

interface Stack {
  readonly host: CellHost;
  readonly sql: SqlBackend;
  readonly room: CellKey;
  readonly wsUrl: string;
  /** room_version → commit time (ms, wall clock) of the current phase. */
  readonly commits: Map<number, number>;
  close(): Promise<void>;
}

async function openStack(cluster: boolean): Promise<Stack> {
  const closers: (() => Promise<unknown>)[] = [];
  const keyPrefix = testKeyPrefix();
  let sql: SqlBackend;
  let bus: RealtimeBus;
  let lease;
  let registry;
  if (cluster) {
    const database = await createTestDatabase();
    closers.push(() => database.drop());
    sql = await openSqlBackend(database.url, { poolSize: 16 });
    const redis = createRedisClient(
      testRedisUrl(),
      { enableAutoPipelining: true },
      silentLogger,
      'bench',
    );
    closers.push(async () => {
      redis.disconnect();
      await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
    });
    bus = RedisRealtimeBus.connect(testRedisUrl(), keyPrefix, silentLogger);
    lease = new RedisLeaseManager({ redis, keyPrefix });
    registry = new RedisNodeRegistry({ redis, keyPrefix });
  } else {
    sql = await openSqlBackend(':memory:');
    bus = new MemoryRealtimeBus();
    lease = new MemoryLeaseManager({ clock: systemClock });
    registry = new MemoryNodeRegistry({ clock: systemClock });
  }
  closers.push(() => sql.close());
  closers.push(() => bus.close());
  const commits = new Map<number, number>();
  const publisher = new RealtimePublisher({ bus, logger: silentLogger });
  const host = new CellHost(
    {
      ...fastConfig,
      nodeId: 'bench-node',
      advertiseAddr: '127.0.0.1:1',
      leaseTtlMs: 30_000,
      snapshotEvery: 1_000,
      idleAfterMs: 600_000,
      timerTickMs: 1_000,
      sweepIntervalMs: 5_000,
    },
    {
      store: new SqlCellStore(sql),
      lease,
      registry,
      clock: systemClock,
      logger: silentLogger,
      onCommitted: (batch) => {
        const at = now();
        for (const entry of batch.entries) commits.set(entry.version, at);
        publisher.onCommitted(batch);
      },
    },
  );
  host.register(counter);
  await host.start();
  closers.push(() => host.drain());
  const hub = new WsHub(
    { maxBufferedBytes: 1 << 20, pingIntervalMs: 25_000 },
    {
      bus,
      authenticate: (token) =>
        Promise.resolve(/^u\d+$/.test(token) ? { userId: token, appCode: 'bench' } : null),
      canFollow: () => Promise.resolve(true),
      logger: silentLogger,
    },
  );
  const server: Server = createServer();
  hub.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    await hub.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const room = { appCode: 'bench', roomId: 'hot' };
  await host.execute(counter, room, { type: 'Add', amount: 1 }); // activated before measuring
  return {
    host,
    sql,
    room,
    commits,
    wsUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`,
    close: async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
    },
  };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
