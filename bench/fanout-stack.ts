/**
 * The fan-out benches' server side, in the bench process: a cell host with the counter
 * kind, the realtime publisher and a WebSocket hub on loopback HTTP, on MariaDB + Redis
 * (commit → Redis pub/sub → hub) or SQLite + the in-process bus; and, as the baseline, a
 * bare `ws` server that broadcasts the same frames with nothing behind it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { MemoryRealtimeBus } from '../src/adapters/memory/memory-bus.js';
import { MemoryLeaseManager } from '../src/adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../src/adapters/memory/memory-node-registry.js';
import { RedisRealtimeBus } from '../src/adapters/redis/redis-bus.js';
import { createRedisClient } from '../src/adapters/redis/redis-client.js';
import { RedisLeaseManager } from '../src/adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../src/adapters/redis/redis-node-registry.js';
import { openSqlBackend, type SqlBackend } from '../src/adapters/sql/database.js';
import { SqlCellStore } from '../src/adapters/sql/sql-cell-store.js';
import { CellHost } from '../src/cell/host.js';
import type { CellKey } from '../src/cell/lease.js';
import { counterDomain } from '../src/cell/testing/counter-domain.js';
import { fastConfig, silentLogger } from '../src/cell/testing/harness.js';
import { FrameCoalescer } from '../src/edge/ws/frame-coalescer.js';
import { WsHub } from '../src/edge/ws/hub.js';
import { roomChannel, type RealtimeBus } from '../src/realtime/bus.js';
import { RealtimePublisher } from '../src/realtime/publisher.js';
import { systemClock } from '../src/shared/clock.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../src/testing/backends.js';

export const counter = counterDomain();
/** The hub's coalescing window: the node's default (ROOMS_WS_COALESCE_MS), or BENCH_COALESCE_MS. */
const COALESCE_MS = Number(process.env.BENCH_COALESCE_MS ?? 5);
/** Wall clock with sub-millisecond resolution, comparable across processes. */
export const now = (): number => performance.timeOrigin + performance.now();

/** What a fan-out phase drives: one room event per `emit()`, its commit time recorded. */
export interface FanoutTarget {
  readonly name: string;
  readonly wsUrl: string;
  /** room_version → the time the frame left for the clients (commit, or the broadcast). */
  readonly commits: Map<number, number>;
  emit(): Promise<unknown>;
  close(): Promise<void>;
}

export interface Stack extends FanoutTarget {
  readonly host: CellHost;
  readonly sql: SqlBackend;
  readonly room: CellKey;
  /** One frame as the hub sends it (the bare baseline sends the same bytes). */
  sampleFrame(): Promise<string>;
}

export async function openStack(cluster: boolean, roomId = 'hot'): Promise<Stack> {
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
    { maxBufferedBytes: 1 << 20, pingIntervalMs: 25_000, coalesceMs: COALESCE_MS },
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
  const room = { appCode: 'bench', roomId };
  await host.execute(counter, room, { type: 'Add', amount: 1 }); // activated before measuring
  return {
    name: 'ours',
    host,
    sql,
    room,
    commits,
    wsUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`,
    emit: () => host.execute(counter, room, { type: 'Add', amount: 1 }),
    async sampleFrame() {
      let unsubscribe = () => Promise.resolve();
      const frame = new Promise<string>((resolve) => {
        void bus
          .subscribe(roomChannel(room), (payload) => resolve(payload.toString('utf8')))
          .then((u) => (unsubscribe = u));
      });
      // The subscription is live once subscribe resolved; then one event shows a frame.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await host.execute(counter, room, { type: 'Add', amount: 1 });
      const text = await frame;
      await unsubscribe();
      return text;
    },
    close: async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
    },
  };
}

/**
 * The baseline: a plain `ws` server (no permessage-deflate, as the hub) that answers a
 * `room.subscribe` and broadcasts each event to every client: the same frame bytes as the
 * hub's (only the room_version differs), serialised once per event, coalesced and written
 * as the hub writes (the same FrameCoalescer and window: one write per socket per flush),
 * with no commit and no bus behind it. What is left is the cost of writing to the sockets.
 */
export async function openBareBroadcast(sampleFrame: string): Promise<FanoutTarget> {
  const server = createServer();
  const wss = new WebSocketServer({ server, path: '/ws', perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.on('message', (data: Buffer) => {
      const seq = /"seq":(\d+)/.exec(data.toString('utf8'))?.[1] ?? '0';
      ws.send(`{"event":"room.subscribe.ack","seq":${seq},"code":0,"data":{}}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const commits = new Map<number, number>();
  let version = 0;
  const clients = new FrameCoalescer<null>(COALESCE_MS, (_, frames) => {
    for (const ws of wss.clients) {
      // As WsConnection.sendAll: an outer cork makes ws' per-frame writes one write.
      const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
      socket?.cork();
      for (const frame of frames) ws.send(frame, { binary: false });
      socket?.uncork();
    }
  });
  const at = /"room_version":\d+/.exec(sampleFrame);
  if (!at) throw new Error(`no room_version in the sample frame: ${sampleFrame}`);
  const before = sampleFrame.slice(0, at.index);
  const after = sampleFrame.slice(at.index + at[0].length);
  return {
    name: 'bare ws',
    commits,
    wsUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`,
    emit() {
      version += 1;
      commits.set(version, now());
      clients.queue(null, Buffer.from(`${before}"room_version":${version}${after}`));
      return Promise.resolve();
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
