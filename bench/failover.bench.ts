/**
 * `npm run bench:failover`: how long a room is out of service when its owner goes away, on
 * three real node processes (MariaDB + Redis, lease TTL 2 s). Per fault, the rooms the
 * victim owns are probed through the other nodes (a RoomHeartbeat with a new request id
 * every 50 ms, each with a 1 s deadline); a room's gap is the time from the fault to its
 * first successful command. Faults, `BENCH_FAULT_ROUNDS` (3) times each:
 * - kill -9 of the owner (it is restarted afterwards);
 * - SIGSTOP of the owner, kept stopped until every room answers elsewhere and at least
 *   3 TTLs, then SIGCONT (it must not commit anything when it wakes; the suites test that);
 * - a drain over the admin API (then undrain).
 * Targets (issue): kill -9 and SIGSTOP ≤ TTL + 1 s, drain < 0.5 s. Last lines:
 * `failover_<fault>_gap_p50_ms=`, `failover_<fault>_gap_max_ms=`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GrpcForwarder } from '../src/edge/grpc/room-service.js';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_GRPC_TOKEN,
  startBenchCluster,
  type BenchCluster,
  type BenchNode,
} from './cluster-nodes.js';
import { quantile } from './load.js';

const TTL_MS = 2_000;
const ROOMS = 30;
const ROUNDS = Number(process.env.BENCH_FAULT_ROUNDS ?? 3);
const PROBE_EVERY_MS = 50;
const GIVE_UP_MS = 30_000;

type Fault = 'kill9' | 'sigstop' | 'drain';

async function main(): Promise<void> {
  const cluster = await startBenchCluster(['fail-a', 'fail-b', 'fail-c'], {
    ROOMS_LEASE_TTL_MS: String(TTL_MS),
    ROOMS_DRAIN_TIMEOUT_MS: '5000',
  });
  // Short deadlines: a probe stuck on a dead owner must not hide the moment it is back.
  const probe = new GrpcForwarder({
    token: BENCH_GRPC_TOKEN,
    tls: null,
    timeoutMs: 1_000,
    markForwarded: false,
  });
  try {
    const rooms: string[] = [];
    for (let i = 0; i < ROOMS; i++) {
      const entry = cluster.nodes[i % cluster.nodes.length]!;
      const { room_id } = (await cluster.client.call(entry.grpc, 'CreateRoom', {
        request_id: `failover-create-${i}`,
        owner_user_id: '1001',
        title: `failover ${i}`,
        seat_count: 1,
      })) as { room_id: string };
      await cluster.client.call(entry.grpc, 'JoinRoom', {
        room_id,
        user_id: '1001',
        request_id: `failover-join-${i}`,
      });
      rooms.push(room_id);
    }
    console.log(
      `failover on 3 node processes (MariaDB + Redis), lease TTL ${TTL_MS} ms, ${ROOMS} rooms, ${ROUNDS} rounds per fault`,
    );
    const gaps: Record<Fault, number[]> = { kill9: [], sigstop: [], drain: [] };
    let seq = 0;
    const heartbeat = (node: BenchNode, roomId: string) =>
      probe.call(node.grpc, 'RoomHeartbeat', {
        room_id: roomId,
        user_id: '1001',
        request_id: `failover-probe-${++seq}`,
      });
    for (let round = 1; round <= ROUNDS; round++) {
      for (const fault of ['kill9', 'sigstop', 'drain'] as const) {
        // Every room answers before the fault, so the owners are current.
        await Promise.all(rooms.map((room) => untilServed(cluster.nodes, room, heartbeat)));
        const victim = await busiestOwner(cluster, rooms);
        const affected = [];
        for (const room of rooms)
          if ((await cluster.ownerOf(room)) === victim.id) affected.push(room);
        const others = cluster.nodes.filter((n) => n !== victim);
        const started = performance.now();
        const served = Promise.all(
          affected.map((room) =>
            untilServed(others, room, heartbeat).then(() => performance.now() - started),
          ),
        );
        await inject(fault, victim);
        const roundGaps = await served;
        gaps[fault].push(...roundGaps);
        const sorted = [...roundGaps].sort((a, b) => a - b);
        console.log(
          `${fault.padEnd(8)} round ${round}: ${affected.length} rooms of ${victim.id}, gap p50 ${quantile(sorted, 0.5).toFixed(0)} ms, max ${sorted.at(-1)?.toFixed(0)} ms`,
        );
        await recover(fault, victim, cluster);
      }
    }
    for (const fault of ['kill9', 'sigstop', 'drain'] as const) {
      const sorted = gaps[fault].sort((a, b) => a - b);
      console.log(`failover_${fault}_gap_p50_ms=${quantile(sorted, 0.5).toFixed(0)}`);
      console.log(`failover_${fault}_gap_max_ms=${(sorted.at(-1) ?? NaN).toFixed(0)}`);
    }
  } finally {
    probe.close();
    for (const node of cluster.nodes) if (node.process.alive) node.process.child.kill('SIGCONT');
    await cluster.close();
  }
}

async function inject(fault: Fault, victim: BenchNode): Promise<void> {
  if (fault === 'kill9') victim.process.child.kill('SIGKILL');
  else if (fault === 'sigstop') victim.process.child.kill('SIGSTOP');
  else await admin(victim, 'drain');
}

async function recover(fault: Fault, victim: BenchNode, cluster: BenchCluster): Promise<void> {
  if (fault === 'kill9') {
    await cluster.restart(victim);
  } else if (fault === 'sigstop') {
    // Stopped past 3 TTLs in all, so the woken node finds its leases long gone.
    await sleep(3 * TTL_MS);
    victim.process.child.kill('SIGCONT');
    await sleep(TTL_MS);
  } else {
    await admin(victim, 'undrain');
  }
}

async function admin(node: BenchNode, action: 'drain' | 'undrain'): Promise<void> {
  const res = await fetch(`${node.http}/api/v1/admin/node/${action}`, {
    method: 'POST',
    headers: { 'x-admin-token': BENCH_ADMIN_TOKEN },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`${action} ${node.id}: HTTP ${res.status} ${await res.text()}`);
}

/** Probes a room through `nodes` (in turn) until one call succeeds. */
async function untilServed(
  nodes: readonly BenchNode[],
  roomId: string,
  heartbeat: (node: BenchNode, roomId: string) => Promise<unknown>,
): Promise<void> {
  const deadline = performance.now() + GIVE_UP_MS;
  let lastError: unknown;
  for (let i = 0; performance.now() < deadline; i++) {
    try {
      await heartbeat(nodes[i % nodes.length]!, roomId);
      return;
    } catch (error) {
      lastError = error;
      await sleep(PROBE_EVERY_MS);
    }
  }
  throw new Error(`room ${roomId} not served within ${GIVE_UP_MS} ms: ${String(lastError)}`);
}

/** The live node owning the most of `rooms` (the fault then hits as many rooms as it can). */
async function busiestOwner(cluster: BenchCluster, rooms: readonly string[]): Promise<BenchNode> {
  const counts = new Map<string, number>();
  for (const room of rooms) {
    const owner = await cluster.ownerOf(room);
    if (owner) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  const [id] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
  const node = cluster.nodes.find((n) => n.id === id);
  if (!node) throw new Error('no owner found for the rooms');
  return node;
}

await main();
process.exit(0);
