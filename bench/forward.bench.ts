/**
 * `npm run bench:forward`: gRPC end to end on a 2-node cluster (MariaDB + Redis, two
 * `src/main/server.ts` processes). The same load — RoomHeartbeat on 200 rooms at
 * concurrency 32 — is sent (1) straight to each room's owner and (2) half of it to the
 * non-owner, which forwards (on its `Forward` stream to the owner). After one discarded warm-up
 * pair, short rounds interleave (the order swapped each round); the ratio is the median of
 * the per-pair ratios. Last line:
 * `ratio_forwarded=<half-forwarded throughput / direct throughput>`.
 */
import { startBenchCluster } from './cluster-nodes.js';
import {
  describeRatios,
  describeRun,
  interleave,
  median,
  ROUNDS,
  runLoad,
  SECONDS,
} from './load.js';

const ROOMS = 200;
const CONCURRENCY = 32;

async function main(): Promise<void> {
  const cluster = await startBenchCluster(['bench-a', 'bench-b']);
  const { nodes, client } = cluster;
  try {
    // Rooms created alternately through both nodes, so each owns about half.
    const rooms: { roomId: string; owner: string; other: string }[] = [];
    for (let i = 0; i < ROOMS; i++) {
      const entry = nodes[i % 2]!;
      const { room_id } = (await client.call(entry.grpc, 'CreateRoom', {
        request_id: `bench-create-${i}`,
        owner_user_id: '1001',
        title: `bench ${i}`,
        seat_count: 1,
      })) as { room_id: string };
      await client.call(entry.grpc, 'JoinRoom', {
        room_id,
        user_id: '1001',
        request_id: `bench-join-${i}`,
      });
      const ownerId = await cluster.ownerOf(room_id);
      const owner = nodes.find((n) => n.id === ownerId)!;
      const other = nodes.find((n) => n !== owner)!;
      rooms.push({ roomId: room_id, owner: owner.grpc, other: other.grpc });
    }
    console.log(
      `gRPC RoomHeartbeat on a 2-node cluster: ${ROOMS} rooms, concurrency ${CONCURRENCY}, ${ROUNDS} rounds x ${SECONDS}s`,
    );
    // Every command names its request id (the service refuses one without).
    let seq = 0;
    const heartbeat = (addr: string, roomId: string) =>
      client.call(addr, 'RoomHeartbeat', {
        room_id: roomId,
        user_id: '1001',
        request_id: `bench-heartbeat-${++seq}`,
      });
    const load = (forwardHalf: boolean) => () =>
      runLoad(CONCURRENCY, SECONDS * 1000, (_, i) => {
        const room = rooms[i % ROOMS]!;
        return heartbeat(forwardHalf && i % 2 === 1 ? room.other : room.owner, room.roomId);
      });
    // One discarded pair first: the nodes' compiled code warms up on both paths.
    await load(false)();
    await load(true)();
    const result = await interleave(ROUNDS, load(false), load(true), (round, d, m) => {
      console.log(describeRun(`direct to owner #${round}`, d));
      console.log(describeRun(`half forwarded  #${round}`, m));
    });
    const ratio = result.ratio;
    console.log(
      `median direct ${median(result.a.map((r) => r.perSecond)).toFixed(0)} cmd/s (p99 ${median(result.a.map((r) => r.p99Ms)).toFixed(1)} ms), ` +
        `half forwarded ${median(result.b.map((r) => r.perSecond)).toFixed(0)} cmd/s (p99 ${median(result.b.map((r) => r.p99Ms)).toFixed(1)} ms), ` +
        `forwarded/direct per round ${describeRatios(result)}`,
    );
    console.log(`ratio_forwarded=${ratio.toFixed(3)}`);
  } finally {
    await cluster.close();
  }
}

await main();
