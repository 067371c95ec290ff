/**
 * `connections`: n WebSocket connections on one real node, each following 1–3 voice rooms.
 * The node (src/main/node.ts on the embedded backend) and the clients run in two child
 * processes (connections-node.ts, connections-clients.ts), so the node's memory, CPU and
 * event loop are its own. Per size, from scratch:
 *
 * 1. the node's idle CPU over a window with no socket (the baseline of the ping cost);
 * 2. a connect storm of BENCH_CONNECT_PER_S (2,000) sockets/s, each authenticated by its
 *    JWT and following its rooms (canFollow asks each room): the node's longest event-loop
 *    stall during it;
 * 3. memory per idle connection: RSS and JS heap + external after the storm less before,
 *    over n, after full collections (the figure is the larger: connections-plan.ts);
 * 4. the same idle window with the sockets open and a short ROOMS_WS_PING_INTERVAL_MS: the
 *    hub's CPU per ping round per 1,000 sockets, and the longest stall of a round;
 * 5. every socket unfollowing and following its rooms again, all at once: follows/s;
 * 6. BENCH_CONNECT_STORMS − 1 (2) more storms, each after every socket was cut and the node
 *    saw them go (a node's clients reconnecting at once): the stall figure is the median of
 *    the storms' longest stalls (one storm's is at the mercy of this shared machine), the
 *    worst printed beside it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { median } from '../load.js';
import { startChild, type BenchChild } from './child.js';
import {
  keepAliveCpuPercent,
  kibPerConnection,
  pingCpuMsPer1k,
  roomCountFor,
  type MemorySample,
} from './connections-plan.js';
import type { ScaleDimension, ScaleFigures } from './dimension.js';

const CONNECT_PER_S = Number(process.env.BENCH_CONNECT_PER_S ?? 2_000);
const STORMS = Math.max(1, Number(process.env.BENCH_CONNECT_STORMS ?? 3));
/** Short, so an idle window holds several rounds; the product's default is 25 s. */
const PING_INTERVAL_MS = Number(process.env.BENCH_PING_INTERVAL_MS ?? 3_000);
const IDLE_WINDOW_MS = Number(process.env.BENCH_IDLE_WINDOW_MS ?? 15_000);
const DEFAULT_PING_INTERVAL_MS = 25_000;
const SECRET = 'connections-dimension-secret-of-32-bytes-or-more';
const APP_CODE = 'default';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Storm {
  connected: number;
  failed: number;
  failures: string;
  refused: number;
  ms: number;
}

interface Watched {
  maxStallMs: number;
  maxGcMs: number;
  cpuMs: number;
  ms: number;
}

async function run(sockets: number): Promise<ScaleFigures> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rooms-scale-connections-'));
  const env = nodeEnv(dir);
  const { child: first } = await startChild('connections-node.ts', env, ['--expose-gc']);
  const setup = await first
    .ask<{ rooms: number; joins: number }>('setup', { sockets })
    .finally(() => first.close());
  // BENCH_NODE_PROF=<dir>: a CPU profile of the measured node (to find what stalls it).
  const prof = process.env.BENCH_NODE_PROF;
  const { child: node, ready } = await startChild('connections-node.ts', env, [
    '--expose-gc',
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
  ]);
  const { child: clients } = await startChild('connections-clients.ts');
  try {
    await node.ask('warm', { sockets });
    const watch = async (ms: number) => {
      await node.ask('watch');
      await sleep(ms);
      return node.ask<Watched>('watched');
    };
    const idle = await watch(IDLE_WINDOW_MS);
    const before = await node.ask<MemorySample>('memory');

    const stormOnce = async () => {
      await node.ask('watch');
      const storm = await clients.ask<Storm>('storm', {
        url: ready.url,
        sockets,
        perSecond: CONNECT_PER_S,
        secret: SECRET,
        appCode: APP_CODE,
        roomCount: roomCountFor(sockets),
      });
      return { storm, loop: await node.ask<Watched>('watched') };
    };
    const { storm, loop: stormLoop } = await stormOnce();
    await sleep(2_000);
    const after = await node.ask<MemorySample & { connections: number }>('memory');
    const memory = kibPerConnection(before, after, after.connections);

    const pinged = await watch(IDLE_WINDOW_MS);
    const msPer1k = pingCpuMsPer1k({
      cpuMs: pinged.cpuMs,
      baselineCpuMs: (idle.cpuMs * pinged.ms) / idle.ms,
      windowMs: pinged.ms,
      pingIntervalMs: PING_INTERVAL_MS,
      sockets: after.connections,
    });
    const refollow = await clients.ask<{ follows: number; refused: number; ms: number }>(
      'refollow',
    );
    const open = await clients.ask<{ sockets: number }>('open');
    const storms = [{ storm, loop: stormLoop }];
    while (storms.length < STORMS) {
      await clients.ask('drop');
      await untilNoConnection(node);
      storms.push(await stormOnce());
    }
    const stalls = storms.map((s) => s.loop.maxStallMs);
    const perStorm = storms
      .map(
        (s) =>
          `${s.loop.maxStallMs.toFixed(1)} ms at ${(s.storm.connected / (s.storm.ms / 1000)).toFixed(0)}/s, ` +
          `${(s.loop.cpuMs / Math.max(1, s.storm.connected)).toFixed(2)} ms CPU each`,
      )
      .join('; ');
    console.log(
      `  ${sockets} sockets: ${setup.rooms} rooms, ${setup.joins} follows; storm ${(storm.ms / 1000).toFixed(1)} s, ` +
        `${storm.connected} connected, ${storm.failed} failed${storm.failures ? ` (${storm.failures})` : ''}, ` +
        `${storm.refused} follows refused; ` +
        `RSS ${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} MiB, ` +
        `heap ${(before.heapUsed / 2 ** 20).toFixed(0)} → ${(after.heapUsed / 2 ** 20).toFixed(0)} MiB; ` +
        `idle CPU ${idle.cpuMs.toFixed(0)} ms → ${pinged.cpuMs.toFixed(0)} ms per ${(IDLE_WINDOW_MS / 1000).toFixed(0)} s; ` +
        `${open.sockets} still open; per storm, longest stall: ${perStorm}`,
    );
    return {
      kib_per_connection: memory.figure,
      kib_per_connection_rss: memory.rss,
      kib_per_connection_heap: memory.heap,
      connect_storm_max_stall_ms: median(stalls),
      connect_storm_worst_stall_ms: Math.max(...stalls),
      connect_storm_max_gc_ms: Math.max(...storms.map((s) => s.loop.maxGcMs)),
      // The first storm's (a node that served no socket yet; the others' are printed above).
      connect_storm_per_s: storm.connected / (storm.ms / 1000),
      // The node's CPU per connection of the storm: its upgrade, token check and follows.
      connect_cpu_ms: stormLoop.cpuMs / Math.max(1, storm.connected),
      ping_cpu_ms_per_1k: msPer1k,
      ping_idle_max_stall_ms: pinged.maxStallMs,
      keepalive_cpu_pct_at_25s: keepAliveCpuPercent(
        msPer1k,
        after.connections,
        DEFAULT_PING_INTERVAL_MS,
      ),
      follows_per_s: refollow.follows / (refollow.ms / 1000),
      failed_connections:
        storms.reduce((n, s) => n + s.storm.failed, 0) + (storm.connected - open.sockets),
      refused_follows: refollow.refused,
    };
  } finally {
    await clients.close();
    await node.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Waits until the node has closed every connection of the clients (it saw them cut). */
async function untilNoConnection(node: BenchChild) {
  for (let waited = 0; ; waited += 200) {
    const { connections } = await node.ask<{ connections: number }>('connections');
    if (connections === 0) return;
    if (waited > 60_000) throw new Error(`${connections} connections still open after a minute`);
    await sleep(200);
  }
}

function nodeEnv(dir: string): Record<string, string> {
  return {
    ROOMS_DB_URL: path.join(dir, 'rooms.sqlite'),
    ROOMS_HTTP_HOST: '127.0.0.1',
    ROOMS_HTTP_PORT: '0',
    ROOMS_GRPC_PORT: '0',
    ROOMS_MEDIA_PORT: '0',
    ROOMS_MEDIA_WORKERS: '1',
    ROOMS_LOG_LEVEL: 'silent',
    ROOMS_JWT_SECRET: SECRET,
    ROOMS_WS_PING_INTERVAL_MS: String(PING_INTERVAL_MS),
    // Nobody heartbeats during the run: presence must outlast it.
    ROOMS_PRESENCE_TIMEOUT_MS: String(3_600_000),
    ROOMS_ROOM_CREATE_LIMIT: '0',
    ROOMS_MAX_OPEN_ROOMS_PER_OWNER: '0',
  };
}

export const connections: ScaleDimension = {
  name: 'connections',
  what: 'idle WebSocket connections on one node (1–3 rooms each): memory, connect storm, pings',
  unit: 'sockets',
  sizes: [1_000, 5_000, 10_000],
  plots: [
    {
      figure: 'kib_per_connection',
      label: 'KiB per connection',
      with: [
        { figure: 'kib_per_connection_rss', label: 'RSS growth' },
        { figure: 'kib_per_connection_heap', label: 'JS heap + external growth' },
      ],
    },
    {
      figure: 'connect_storm_max_stall_ms',
      label: 'longest event-loop stall (ms)',
      with: [{ figure: 'ping_idle_max_stall_ms', label: 'idle, pings only' }],
    },
  ],
  run,
};
