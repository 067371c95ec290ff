/**
 * Child process of the `rooms` dimension: a CellHost on MariaDB + Redis (the counter room
 * kind of bench/cell.bench.ts) in a process of its own, so its memory is the host's alone.
 * `run {rooms, idleAfterMs, concurrency}` → `run {...figures}`: touches that many distinct
 * rooms once each, `concurrency` at a time, while idle unloading (after `idleAfterMs`)
 * unloads the earlier ones; samples RSS and loaded cells every 100 ms, and the live heap
 * halfway and at the end; then the heap per loaded cell, what is left once every cell has
 * unloaded, and 1,000 of the unloaded rooms touched again (their activation reads a
 * snapshot). Sends `ready` first; run with
 * `--expose-gc`.
 */
import { createRedisClient } from '../../src/adapters/redis/redis-client.js';
import { RedisLeaseManager } from '../../src/adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../../src/adapters/redis/redis-node-registry.js';
import { openSqlBackend } from '../../src/adapters/sql/database.js';
import { SqlCellStore } from '../../src/adapters/sql/sql-cell-store.js';
import { CellHost } from '../../src/cell/host.js';
import { counterDomain } from '../../src/cell/testing/counter-domain.js';
import { fastConfig, silentLogger } from '../../src/cell/testing/harness.js';
import { systemClock } from '../../src/shared/clock.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../src/testing/backends.js';
import { quantile } from '../load.js';
import { MemoryPeaks, touchAll } from './rooms-touch.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const counter = counterDomain();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The live heap: after two full collections (synchronous: the load pauses meanwhile). */
function liveHeap(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

async function run(rooms: number, idleAfterMs: number, concurrency: number) {
  const database = await createTestDatabase();
  const keyPrefix = testKeyPrefix();
  const sql = await openSqlBackend(database.url, { poolSize: 16 });
  const redis = createRedisClient(
    testRedisUrl(),
    { enableAutoPipelining: true },
    silentLogger,
    'bench',
  );
  const host = new CellHost(
    {
      ...fastConfig,
      nodeId: 'scale-rooms',
      advertiseAddr: '127.0.0.1:1',
      // The product's default TTL and tick; only the idle time is compressed.
      leaseTtlMs: 10_000,
      timerTickMs: 250,
      sweepIntervalMs: 2_000,
      snapshotEvery: 100,
      idleAfterMs,
    },
    {
      store: new SqlCellStore(sql),
      lease: new RedisLeaseManager({ redis, keyPrefix }),
      registry: new RedisNodeRegistry({ redis, keyPrefix }),
      clock: systemClock,
      logger: silentLogger,
    },
  );
  host.register(counter);
  await host.start();
  try {
    const baselineRss = process.memoryUsage().rss;
    const baselineHeap = liveHeap();
    const peaks = new MemoryPeaks(() => host.loadedCells.length);
    const sampler = setInterval(() => peaks.sample(), 100);
    const touch = (i: number) =>
      host.execute(counter, { appCode: 'scale', roomId: `r${i}` }, { type: 'Add', amount: 1 });
    // Halfway, the live heap: bounded memory is no larger at the end than here.
    let touched = 0;
    let heapHalfway = NaN;
    const started = performance.now();
    const cold = await touchAll(rooms, concurrency, async (i) => {
      await touch(i);
      if (++touched === Math.floor(rooms / 2)) heapHalfway = liveHeap();
    });
    const touchS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peaks.sample();

    const loaded = host.loadedCells.length;
    const heapLoaded = liveHeap();
    const unloadStarted = performance.now();
    while (host.loadedCells.length > 0) await sleep(100);
    const unloadS = (performance.now() - unloadStarted) / 1000;
    const heapUnloaded = liveHeap();
    const rssEnd = process.memoryUsage().rss;

    const again = Math.min(rooms, 1_000);
    const step = Math.floor(rooms / again);
    const warm = await touchAll(again, concurrency, (i) => touch(i * step));
    return {
      touch_per_s: rooms / touchS,
      cold_activation_p50_ms: quantile(cold, 0.5),
      cold_activation_p99_ms: quantile(cold, 0.99),
      reactivation_p50_ms: quantile(warm, 0.5),
      reactivation_p99_ms: quantile(warm, 0.99),
      loaded_cells_peak: peaks.loadedPeak,
      rss_peak_mib: peaks.rssPeak / 2 ** 20,
      rss_growth_mib: (peaks.rssPeak - baselineRss) / 2 ** 20,
      heap_live_end_mib: heapLoaded / 2 ** 20,
      heap_end_over_halfway: heapLoaded / heapHalfway,
      // What the rooms left behind once every cell unloaded: a leak would show here.
      retained_bytes_per_room: (heapUnloaded - baselineHeap) / rooms,
      rss_end_mib: rssEnd / 2 ** 20,
      kib_per_loaded_cell: loaded > 0 ? (heapLoaded - heapUnloaded) / 1024 / loaded : NaN,
      loaded_at_end: loaded,
      unload_s: unloadS,
    };
  } finally {
    await host.drain();
    redis.disconnect();
    await sql.close();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
    await database.drop();
  }
}

process.on(
  'message',
  (m: { type: string; rooms: number; idleAfterMs: number; concurrency: number }) => {
    if (m.type === 'exit') process.exit(0);
    if (m.type !== 'run') return;
    run(m.rooms, m.idleAfterMs, m.concurrency).then(
      (figures) => process.send?.({ type: 'run', ...figures }),
      (error: unknown) => process.send?.({ type: 'run', error: String(error) }),
    );
  },
);
process.send?.({ type: 'ready' });
