/**
 * The fault plan (seeded: the same seed, the same faults at the same offsets) and the
 * injector that carries it out against the cluster. Process and backend faults run one at a
 * time, each fully recovered (the node or server back up) before the next begins; RTC faults
 * (drop, duplicate, reorder) are applied per mic session by ./rtc.ts and only logged here.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LEASE_TTL_MS, type ChaosCluster } from './cluster.js';
import type { Prng } from './prng.js';

export const PROCESS_FAULTS = [
  'kill-restart',
  'pause',
  'redis-flushall',
  'redis-restart',
  'mariadb-restart',
] as const;
export const RTC_FAULTS = ['rtc-drop', 'rtc-duplicate', 'rtc-reorder'] as const;
export type ProcessFault = (typeof PROCESS_FAULTS)[number];
export type FaultType = ProcessFault | (typeof RTC_FAULTS)[number];

/** How long a paused node stays stopped: past the lease TTL, so its rooms move. */
export const PAUSE_MS = LEASE_TTL_MS + 1_000;

export interface PlannedFault {
  /** Offset from the workload's start. */
  readonly atMs: number;
  readonly type: ProcessFault;
  /** Which node (kill-restart, pause) when no node owns a room of the workload. */
  readonly node: number;
}

export interface InjectedFault {
  readonly type: FaultType;
  readonly detail: string;
  /** When it took effect (the kill, the SIGSTOP, the FLUSHALL). */
  readonly atMs: number;
  /** When the injector had undone it (process back, SIGCONT), if it has anything to undo. */
  recoveredAtMs?: number;
}

export class FaultLog {
  readonly faults: InjectedFault[] = [];

  record(type: FaultType, detail: string): InjectedFault {
    const fault: InjectedFault = { type, detail, atMs: Date.now() };
    this.faults.push(fault);
    return fault;
  }
}

/**
 * Every process fault once (shuffled), then more drawn at random for a longer run, spread
 * over the run with jitter; the last one leaves time to recover before the workload ends.
 */
export function planFaults(prng: Prng, durationMs: number, spacingMs = 7_000): PlannedFault[] {
  const slots = Math.max(PROCESS_FAULTS.length, Math.floor((durationMs - 8_000) / spacingMs));
  const types: ProcessFault[] = [...PROCESS_FAULTS];
  while (types.length < slots) types.push(prng.pick(PROCESS_FAULTS));
  for (let i = types.length - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [types[i], types[j]] = [types[j]!, types[i]!];
  }
  const step = (durationMs - 8_000) / types.length;
  return types.map((type, i) => ({
    atMs: Math.round(3_000 + i * step + prng.next() * step * 0.3),
    type,
    node: prng.int(0, 2),
  }));
}

/** Runs the plan from `startMs`; resolves once the last fault is recovered. */
export async function injectFaults(
  plan: readonly PlannedFault[],
  cluster: ChaosCluster,
  log: FaultLog,
  startMs: number,
  rooms: () => readonly string[],
): Promise<void> {
  for (const planned of plan) {
    const wait = startMs + planned.atMs - Date.now();
    if (wait > 0) await sleep(wait);
    await inject(planned, cluster, log, rooms());
  }
}

/**
 * The node a kill or pause hits: the one that owns the most of the workload's rooms now (so
 * the fault moves rooms), the planned one when none owns any.
 */
async function target(planned: PlannedFault, cluster: ChaosCluster, rooms: readonly string[]) {
  const owners = await Promise.all(rooms.map((room) => cluster.ownerOf(room).catch(() => null)));
  const counts = cluster.nodes.map((n) => owners.filter((o) => o === n.name).length);
  const most = Math.max(...counts);
  const index = most > 0 ? counts.indexOf(most) : planned.node;
  return { node: cluster.nodes[index]!, owned: counts[index]! };
}

async function inject(
  planned: PlannedFault,
  cluster: ChaosCluster,
  log: FaultLog,
  rooms: readonly string[],
): Promise<void> {
  const { node, owned } =
    planned.type === 'kill-restart' || planned.type === 'pause'
      ? await target(planned, cluster, rooms)
      : { node: cluster.nodes[planned.node]!, owned: 0 };
  switch (planned.type) {
    case 'kill-restart': {
      const fault = log.record(
        planned.type,
        `kill -9 ${node.name} (owner of ${owned} rooms), restart`,
      );
      await cluster.killAndRestart(node);
      fault.recoveredAtMs = Date.now();
      return;
    }
    case 'pause': {
      const fault = log.record(
        planned.type,
        `SIGSTOP ${node.name} (owner of ${owned} rooms) for ${PAUSE_MS} ms`,
      );
      cluster.pause(node);
      await sleep(PAUSE_MS);
      cluster.resume(node);
      fault.recoveredAtMs = Date.now();
      return;
    }
    case 'redis-flushall': {
      const redis = new Redis(cluster.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        log.record(planned.type, 'FLUSHALL');
        await redis.flushall();
      } finally {
        redis.disconnect();
      }
      return;
    }
    case 'redis-restart': {
      const fault = log.record(planned.type, 'kill -9 redis-server, then start it (empty)');
      await cluster.redis.restart();
      fault.recoveredAtMs = Date.now();
      return;
    }
    case 'mariadb-restart': {
      const fault = log.record(planned.type, 'kill -9 mariadbd, then start it (same data)');
      await cluster.mariadb.restart();
      fault.recoveredAtMs = Date.now();
      return;
    }
  }
}
