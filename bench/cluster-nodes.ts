/**
 * Real node processes (`src/main/server.ts`) on this machine's MariaDB + Redis for the
 * cluster benches, in a fresh database and key prefix that `close()` drops again.
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

export const BENCH_GRPC_TOKEN = 'bench-grpc-token-0123456789abcdef0123';
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

export interface BenchNode {
  readonly id: string;
  /** `127.0.0.1:<grpc port>` */
  readonly grpc: string;
  readonly http: string;
  readonly env: Record<string, string>;
  process: ServerProcess;
}

export interface BenchCluster {
  readonly nodes: BenchNode[];
  /** A gRPC client with the cluster's credential (no forwarded mark: a client's call). */
  readonly client: GrpcForwarder;
  readonly keyPrefix: string;
  /** The node id holding a room's lease in Redis, or null. */
  ownerOf(roomId: string, appCode?: string): Promise<string | null>;
  /** Starts a node's process again with its environment (after a kill). */
  restart(node: BenchNode): Promise<void>;
  close(): Promise<void>;
}

export async function startBenchCluster(
  ids: readonly string[],
  env: Record<string, string> = {},
): Promise<BenchCluster> {
  const database = await createTestDatabase();
  const keyPrefix = testKeyPrefix();
  const redis = createRedisClient(testRedisUrl(), {}, silentLogger, 'bench');
  const client = new GrpcForwarder({
    token: BENCH_GRPC_TOKEN,
    tls: null,
    timeoutMs: 10_000,
    markForwarded: false,
  });
  const nodes: BenchNode[] = [];
  const close = async () => {
    client.close();
    await Promise.all(nodes.map((n) => n.process.stop()));
    redis.disconnect();
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
    await database.drop();
  };
  try {
    for (const id of ids) {
      const [http, grpc] = [await freePort(), await freePort()];
      const nodeEnv = {
        ROOMS_NODE_ID: id,
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '16',
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: String(http),
        ROOMS_GRPC_HOST: '127.0.0.1',
        ROOMS_GRPC_PORT: String(grpc),
        ROOMS_GRPC_TOKEN: BENCH_GRPC_TOKEN,
        ROOMS_ADVERTISE_ADDR: `127.0.0.1:${grpc}`,
        ROOMS_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
        ROOMS_JWT_SECRET: 'bench-secret-0123456789abcdef0123456789',
        ROOMS_PRESENCE_TIMEOUT_MS: '600000',
        ROOMS_LOG_LEVEL: 'warn',
        ROOMS_MEDIA_EMBEDDED: 'false', // media has its own benches
        ROOMS_MEDIA_INTERNAL_TOKEN: 'media-token-not-called-here',
        ...env,
      };
      const node: BenchNode = {
        id,
        grpc: `127.0.0.1:${grpc}`,
        http: `http://127.0.0.1:${http}`,
        env: nodeEnv,
        process: new ServerProcess(id, nodeEnv, undefined, profileArgs()),
      };
      nodes.push(node);
      await waitForHealthy(node.process, node.http, 60_000);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    nodes,
    client,
    keyPrefix,
    async ownerOf(roomId, appCode = 'default') {
      const lease = await redis.get(`${keyPrefix}lease:${appCode}\u0000${roomId}`);
      return lease?.split('\n')[0] ?? null;
    },
    async restart(node) {
      await node.process.stop();
      node.process = new ServerProcess(node.id, node.env, undefined, profileArgs());
      await waitForHealthy(node.process, node.http, 60_000);
    },
    close,
  };
}

/** BENCH_NODE_PROF=<dir>: every node process writes a CPU profile there when it stops. */
function profileArgs(): string[] {
  const dir = process.env.BENCH_NODE_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}
