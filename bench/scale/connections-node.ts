/**
 * Child process of the `connections` dimension: one real node (src/main/node.ts, on the
 * embedded backend its environment names) in a process of its own, so that its memory and
 * CPU are the node's alone. Driven over IPC:
 *
 * - `setup {sockets}` → `setup {rooms, joins}`: voice rooms, each socket's user present in
 *   the rooms it will follow (the hub's canFollow asks the room, as in production); run by
 *   a first node on the database, so that the measured node does not start with its garbage
 * - `warm {sockets}` → `warm {rooms}`: the measured node loads every room (the storm then
 *   measures connections, not cell activations)
 * - `memory` → `memory {rss, heapUsed, external, connections}` after two full collections
 * - `connections` → `connections {connections}`: the hub's open sockets, nothing collected
 * - `watch` → starts the event-loop delay monitor and the CPU clock; `watched` →
 *   `watched {maxStallMs, maxGcMs, cpuMs, ms}` since `watch`
 *
 * Sends `ready {url}` once listening. Run with `--expose-gc`.
 */
import {
  monitorEventLoopDelay,
  PerformanceObserver,
  type IntervalHistogram,
} from 'node:perf_hooks';
import { loadConfig } from '../../src/main/config.js';
import { startNode, type RoomsNode } from '../../src/main/node.js';
import { roomCountFor, roomsOf, userIdOf } from './connections-plan.js';

type Command =
  | { type: 'setup'; sockets: number }
  | { type: 'warm'; sockets: number }
  | { type: 'memory' }
  | { type: 'connections' }
  | { type: 'watch' }
  | { type: 'watched' }
  | { type: 'exit' };

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const node = await startNode(loadConfig(process.env));
const send = (message: Record<string, unknown>) => process.send?.(message);

/** Runs `task` over `items`, `concurrency` at a time. */
async function pool<T>(items: T[], concurrency: number, task: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

/** A call retried while the node says so (a cell reloading after a busy moment). */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if ((error as { kind?: string }).kind !== 'unavailable' || attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

async function setup(rooms: RoomsNode, sockets: number): Promise<Record<string, number>> {
  const roomCount = roomCountFor(sockets);
  const ids = Array.from({ length: roomCount }, (_, i) => `scale-${i}`);
  await pool(ids, 16, (roomId) =>
    retried(() =>
      rooms.voice.api.call('CreateRoom', {
        room_id: roomId,
        request_id: `create-${roomId}`,
        // An account id in decimal, past every socket's (userIdOf: 1, 2, …).
        owner_user_id: '999999999',
        title: roomId,
        seat_count: 8,
      }),
    ),
  );
  const joins = Array.from({ length: sockets }, (_, i) =>
    roomsOf(i, roomCount).map((roomId) => ({ room_id: roomId, user_id: userIdOf(i) })),
  ).flat();
  await pool(joins, 32, (join) => retried(() => rooms.voice.api.call('JoinRoom', join)));
  return { rooms: roomCount, joins: joins.length };
}

async function warm(rooms: RoomsNode, sockets: number): Promise<Record<string, number>> {
  const ids = Array.from({ length: roomCountFor(sockets) }, (_, i) => `scale-${i}`);
  await pool(ids, 16, (roomId) =>
    retried(() => rooms.voice.api.call('GetRoom', { room_id: roomId })),
  );
  return { rooms: ids.length };
}

async function memory(): Promise<Record<string, number>> {
  // Twice, a turn apart: finalisers of the first collection free more in the second.
  gc!();
  await new Promise((resolve) => setImmediate(resolve));
  gc!();
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external, connections: node.delivery.hub.connectionCount };
}

let histogram: IntervalHistogram | null = null;
let watchedFrom = { cpu: process.cpuUsage(), at: performance.now() };
/** The longest garbage-collection pause since `watch`: a stall's likely cause, or not. */
let maxGcMs = 0;
new PerformanceObserver((list) => {
  // Entries arrive after the fact: one that started before `watch` (the forced collections
  // of `memory`, say) is not of the window.
  for (const entry of list.getEntries()) {
    if (entry.startTime >= watchedFrom.at) maxGcMs = Math.max(maxGcMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

process.on('message', (command: Command) => {
  void (async () => {
    switch (command.type) {
      case 'setup':
        send({ type: 'setup', ...(await setup(node, command.sockets)) });
        break;
      case 'warm':
        send({ type: 'warm', ...(await warm(node, command.sockets)) });
        break;
      case 'memory':
        send({ type: 'memory', ...(await memory()) });
        break;
      case 'connections':
        send({ type: 'connections', connections: node.delivery.hub.connectionCount });
        break;
      case 'watch':
        // 1 ms resolution: the max then overstates a stall by at most a millisecond.
        histogram = monitorEventLoopDelay({ resolution: 1 });
        histogram.enable();
        watchedFrom = { cpu: process.cpuUsage(), at: performance.now() };
        maxGcMs = 0;
        send({ type: 'watch' });
        break;
      case 'watched': {
        histogram?.disable();
        const cpu = process.cpuUsage(watchedFrom.cpu);
        send({
          type: 'watched',
          maxStallMs: (histogram?.max ?? 0) / 1e6,
          maxGcMs,
          cpuMs: (cpu.user + cpu.system) / 1000,
          ms: performance.now() - watchedFrom.at,
        });
        break;
      }
      case 'exit':
        await node.close();
        process.exit(0);
    }
  })();
});
send({ type: 'ready', url: `${node.httpAddress.replace(/^http/, 'ws')}/ws` });
