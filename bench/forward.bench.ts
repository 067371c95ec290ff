/**
 * `npm run bench:forward`: gRPC end to end on a 2-node cluster (MariaDB + Redis, two
 * `src/main/server.ts` processes). The same load — RoomHeartbeat on 200 rooms at
 * concurrency 32 — is sent (1) straight to each room's owner and (2) half of it to the
 * non-owner, which forwards. Rounds alternate; medians are compared. Last line:
 * `ratio_forwarded=<mixed throughput / direct throughput>`.
 */
import { createRedisClient } from '../src/adapters/redis/redis-client.js';
import { silentLogger } from '../src/cell/testing/harness.js';
import { GrpcForwarder } from '../src/edge/grpc/room-service.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  freePort,
  testKeyPrefix,
  testRedisUrl,
} from '../src/testing/backends.js';
import { ServerProcess, waitForHealthy } from '../src/testing/server-process.js';
import { describeRun, median, runLoad, type LoadResult } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROOMS = 200;
const CONCURRENCY = 32;

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const keyPrefix = testKeyPrefix();
  const redis = createRedisClient(testRedisUrl(), {}, silentLogger, 'bench');
  const token = 'bench-grpc-token-0123456789abcdef0123';
  const client = new GrpcForwarder({ token, tls: null, timeoutMs: 10_000, markForwarded: false });
  const nodes: { id: string; grpc: string; process: ServerProcess }[] = [];
  try {
    for (const id of ['bench-a', 'bench-b']) {
      const [http, grpc] = [await freePort(), await freePort()];
      const process = new ServerProcess(id, {
        ROOMS_NODE_ID: id,
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '16',
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: String(http),
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: String(grpc),
        ROOMS_GRPC_TOKEN: token,
        ROOMS_ADVERTISE_ADDR: `127.0.0.1:${grpc}`,
        ROOMS_JWT_SECRET: 'bench-secret-0123456789abcdef0123456789',
        ROOMS_PRESENCE_TIMEOUT_MS: '600000',
        ROOMS_LOG_LEVEL: 'warn',
        ROOMS_MEDIA_EMBEDDED: 'false', // media has its own tests
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
      });
      nodes.push({ id, grpc: `127.0.0.1:${grpc}`, process });
      await waitForHealthy(process, `http://127.0.0.1:${http}`, 60_000);
    }
    // Rooms created alternately through both nodes, so each owns about half.
    const rooms: { roomId: string; owner: string; other: string }[] = [];
    for (let i = 0; i < ROOMS; i++) {
      const entry = nodes[i % 2]!;
      const { room_id } = (await client.call(entry.grpc, 'CreateRoom', {
        request_id: `bench-create-${i}`,
        owner_user_id: 'u',
        title: `bench ${i}`,
        seat_count: 1,
      })) as { room_id: string };
      await client.call(entry.grpc, 'JoinRoom', {
        room_id,
        user_id: 'u',
        request_id: `bench-join-${i}`,
      });
      const lease = await redis.get(`${keyPrefix}lease:default\u0000${room_id}`);
      const ownerId = lease?.split('\n')[0];
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
        user_id: 'u',
        request_id: `bench-heartbeat-${++seq}`,
      });
    const direct: LoadResult[] = [];
    const mixed: LoadResult[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const d = await runLoad(CONCURRENCY, SECONDS * 1000, (_, i) => {
        const room = rooms[i % ROOMS]!;
        return heartbeat(room.owner, room.roomId);
      });
      const m = await runLoad(CONCURRENCY, SECONDS * 1000, (_, i) => {
        const room = rooms[i % ROOMS]!;
        return heartbeat(i % 2 === 0 ? room.owner : room.other, room.roomId);
      });
      direct.push(d);
      mixed.push(m);
      console.log(describeRun(`direct to owner #${round}`, d));
      console.log(describeRun(`half forwarded  #${round}`, m));
    }
    const ratio = median(mixed.map((r) => r.perSecond)) / median(direct.map((r) => r.perSecond));
    console.log(
      `median direct ${median(direct.map((r) => r.perSecond)).toFixed(0)} cmd/s (p99 ${median(direct.map((r) => r.p99Ms)).toFixed(1)} ms), ` +
        `half forwarded ${median(mixed.map((r) => r.perSecond)).toFixed(0)} cmd/s (p99 ${median(mixed.map((r) => r.p99Ms)).toFixed(1)} ms)`,
    );
    console.log(`ratio_forwarded=${ratio.toFixed(3)}`);
  } finally {
    client.close();
    await Promise.all(nodes.map((n) => n.process.stop()));
    redis.disconnect();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
    await database.drop();
  }
}

await main();
