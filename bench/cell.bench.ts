/**
 * `npm run bench:cell`: the cell runtime against a raw baseline on MariaDB + Redis, in one
 * run (machines are shared and noisy: compare the ratios, not the absolute rates).
 *
 * - ours: CellHost executing counter commands (lease, group commit, fence, log + outbox).
 * - raw: per command, one Redis script call (VerifyOwner) and one transaction inserting the
 *   same command-log, request-outcome and outbox rows, with a per-room lock for gap-free
 *   versions, and none of the runtime.
 *
 * Scenarios: (a) 1,000 rooms at concurrency 64; (b) one hot room at concurrency 256. Each
 * runs ROUNDS short pairs, raw and ours back to back (the order swapped every round); the
 * ratio is the median of the per-pair ratios (bench/load.ts `interleave`).
 */
import { randomUUID } from 'node:crypto';
import { createRedisClient } from '../src/adapters/redis/redis-client.js';
import { RedisLeaseManager } from '../src/adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../src/adapters/redis/redis-node-registry.js';
import { openSqlBackend, type SqlBackend } from '../src/adapters/sql/database.js';
import { SqlCellStore } from '../src/adapters/sql/sql-cell-store.js';
import { CellHost } from '../src/cell/host.js';
import { routeKey, type CellKey } from '../src/cell/lease.js';
import { counterDomain } from '../src/cell/testing/counter-domain.js';
import { fastConfig, silentLogger } from '../src/cell/testing/harness.js';
import { systemClock } from '../src/shared/clock.js';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../src/testing/backends.js';
import {
  describeRatios,
  describeRun,
  interleave,
  median,
  ROUNDS,
  runLoad,
  SECONDS,
  type Interleaved,
} from './load.js';

const POOL = 16;
const counter = counterDomain();

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const keyPrefix = testKeyPrefix();
  const redisUrl = testRedisUrl();
  const sql = await openSqlBackend(database.url, { poolSize: POOL });
  const redis = createRedisClient(redisUrl, { enableAutoPipelining: true }, silentLogger, 'bench');
  const lease = new RedisLeaseManager({ redis, keyPrefix });
  const host = new CellHost(
    {
      ...fastConfig,
      nodeId: 'bench-node',
      advertiseAddr: '127.0.0.1:1',
      leaseTtlMs: 30_000,
      snapshotEvery: 100,
      idleAfterMs: 600_000,
      timerTickMs: 1_000,
      sweepIntervalMs: 5_000,
    },
    {
      store: new SqlCellStore(sql),
      lease,
      registry: new RedisNodeRegistry({ redis, keyPrefix }),
      clock: systemClock,
      logger: silentLogger,
    },
  );
  host.register(counter);
  await host.start();
  const raw = new RawBaseline(sql, lease);
  try {
    console.log(
      `cell runtime vs raw baseline on MariaDB + Redis: ${ROUNDS} rounds x ${SECONDS}s, pool ${POOL}`,
    );
    const manyRooms = Array.from({ length: 1000 }, (_, i) => ({
      appCode: 'bench',
      roomId: `m${i}`,
    }));
    const hotRoom = [{ appCode: 'bench', roomId: 'hot' }];
    // Warm up: every room activated (ours) and leased (raw) before measuring.
    await Promise.all(manyRooms.concat(hotRoom).map((key) => ours(host, key, 'warm')));
    await raw.prepare(manyRooms.concat(hotRoom));

    // BENCH_CELL_ONLY=many or =hot runs one scenario (e.g. under a profiler).
    const only = process.env.BENCH_CELL_ONLY;
    if (only !== 'hot') {
      const many = await compare('(a) 1,000 rooms, concurrency 64', 64, manyRooms, host, raw);
      console.log(`ratio_many_rooms=${many.ratio.toFixed(3)}`);
    }
    if (only !== 'many') {
      const hot = await compare('(b) 1 hot room, concurrency 256', 256, hotRoom, host, raw);
      console.log(`ratio_hot_room=${hot.ratio.toFixed(3)}`);
    }
  } finally {
    await host.drain();
    redis.disconnect();
    await sql.close();
    await deleteKeysWithPrefix(redisUrl, keyPrefix);
    await database.drop();
  }
}

async function compare(
  name: string,
  concurrency: number,
  rooms: CellKey[],
  host: CellHost,
  raw: RawBaseline,
): Promise<Interleaved> {
  const pick = (i: number) => rooms[i % rooms.length]!;
  let round = 0;
  const result = await interleave(
    ROUNDS,
    () => runLoad(concurrency, SECONDS * 1000, (_, i) => raw.command(pick(i))),
    () => runLoad(concurrency, SECONDS * 1000, (_, i) => ours(host, pick(i), `${++round}`)),
    (n, r, o) => {
      console.log(describeRun(`${name} raw  #${n}`, r));
      console.log(describeRun(`${name} ours #${n}`, o));
    },
  );
  console.log(
    `${name}: median ours ${median(result.b.map((r) => r.perSecond)).toFixed(0)} cmd/s (p99 ${median(result.b.map((r) => r.p99Ms)).toFixed(1)} ms), ` +
      `raw ${median(result.a.map((r) => r.perSecond)).toFixed(0)} cmd/s (p99 ${median(result.a.map((r) => r.p99Ms)).toFixed(1)} ms), ` +
      `ours/raw per round ${describeRatios(result)}`,
  );
  return result;
}

async function ours(host: CellHost, key: CellKey, tag: string): Promise<void> {
  const routed = await host.execute(
    counter,
    key,
    { type: 'Add', amount: 1 },
    {
      requestId: `${tag}-${randomUUID()}`,
    },
  );
  if (routed.kind !== 'local') throw new Error('bench host must own every room');
}

/**
 * The same I/O per command with no runtime: VerifyOwner in Redis, then one transaction that
 * inserts the command-log row, the request's outcome row and the outbox row. A per-room lock keeps versions gap-free,
 * as any correct single-writer design must.
 */
class RawBaseline {
  private readonly rooms = new Map<
    string,
    { version: number; token: string; lock: Promise<void> }
  >();

  constructor(
    private readonly sql: SqlBackend,
    private readonly lease: RedisLeaseManager,
  ) {}

  async prepare(keys: CellKey[]): Promise<void> {
    for (const key of keys) {
      const route = `raw:${routeKey(key)}`;
      const granted = await this.lease.ensureOwner(route, 'bench-raw', 600_000);
      if (!granted.granted) throw new Error('raw lease not granted');
      this.rooms.set(route, { version: 0, token: granted.token, lock: Promise.resolve() });
    }
  }

  command(key: CellKey): Promise<void> {
    const route = `raw:${routeKey(key)}`;
    const room = this.rooms.get(route)!;
    const run = room.lock.then(async () => {
      if (!(await this.lease.verifyOwner(route, room.token))) throw new Error('raw lease lost');
      const version = room.version + 1;
      const now = Date.now();
      const requestId = randomUUID();
      const events = JSON.stringify([{ type: 'Added', amount: 1 }]);
      await this.sql.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('room_command_log')
          .values({
            app_code: 'raw',
            room_id: key.roomId,
            version,
            request_id: requestId,
            command_type: 'Add',
            payload: '{"amount":1}',
            events,
            result: `{"reply":{"count":${version}}}`,
            owner_node_id: 'bench-raw',
            lease_token: room.token,
            lease_epoch: 1,
            created_at_ms: now,
          })
          .execute();
        await trx
          .insertInto('room_request_outcomes')
          .values({
            app_code: 'raw',
            room_id: key.roomId,
            request_id: requestId,
            version,
            outcome: `{"reply":{"count":${version}}}`,
            created_at_ms: now,
          })
          .execute();
        const eventId = randomUUID();
        await trx
          .insertInto('room_outbox')
          .values({
            event_id: eventId,
            app_code: 'raw',
            room_id: key.roomId,
            room_version: version,
            event_type: 'Added',
            envelope: JSON.stringify({
              app_code: 'raw',
              event_id: eventId,
              room_id: key.roomId,
              room_version: version,
              type: 'Added',
              occurred_at_ms: now,
              data: { type: 'Added', amount: 1 },
            }),
            status: 'pending',
            attempts: 0,
            worker_id: null,
            lock_until_ms: null,
            next_attempt_at_ms: now,
            last_error: null,
            created_at_ms: now,
            updated_at_ms: now,
          })
          .execute();
      });
      room.version = version;
    });
    room.lock = run.catch(() => undefined);
    return run;
  }
}

await main();
