/**
 * The chaos run's cluster: a private MariaDB and a private Redis on free ports (so the run may
 * kill them), one media server process, and three node processes (src/main/server.ts) with a 2 s lease, outbox retries
 * fast enough to settle within seconds, and a TRTC app for the RTC callbacks. Each node can be
 * killed (-9) and restarted on its ports, or stopped (SIGSTOP) and continued.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort, startPrivateRedis, type PrivateRedis } from '../testing/backends.js';
import { startPrivateMariadb, type PrivateMariadb } from '../testing/private-mariadb.js';
import { ServerProcess, waitForHealthy } from '../testing/server-process.js';

export const LEASE_TTL_MS = 2_000;
export const GRPC_TOKEN = 'chaos-grpc-token-0123456789abcdef0123';
export const ADMIN_TOKEN = 'chaos-admin-token-0123456789';
export const TRTC_SDK_APP_ID = '1400000001';
export const TRTC_KEY = 'chaos-trtc-callback-key';
export const APP = 'default';
const KEY_PREFIX = 'chaos:';
const MEDIA_TOKEN = 'chaos-media-internal-token-0123';
/** How long a mic seat waits for a publish confirmation (short: releases happen in the run). */
export const PUBLISH_TIMEOUT_MS = 3_000;

export interface ChaosNode {
  readonly name: string;
  readonly grpc: string;
  readonly http: string;
  process: ServerProcess;
  /** Every process this node has been (restarts), for the logs kept after the run. */
  readonly generations: ServerProcess[];
  stopped: boolean;
}

export interface ChaosCluster {
  readonly mariadb: PrivateMariadb;
  readonly redis: PrivateRedis;
  readonly dbUrl: string;
  readonly nodes: readonly ChaosNode[];
  /** kill -9, then a new process on the same ports; resolves once it is healthy. */
  killAndRestart(node: ChaosNode): Promise<void>;
  /** The node id holding a room's lease in Redis, or null. */
  ownerOf(roomId: string): Promise<string | null>;
  pause(node: ChaosNode): void;
  resume(node: ChaosNode): void;
  /** Drains every node (SIGTERM; SIGKILL after 20 s). */
  stopNodes(): Promise<void>;
  /** Stops Redis and MariaDB (its data is removed). */
  stopBackends(): Promise<void>;
  /** Writes every node process's output to `dir`. */
  saveLogs(dir: string): Promise<void>;
}

const NODE_NAMES = ['node-1', 'node-2', 'node-3'];
const READY_MS = 90_000;

function nodeEnv(
  name: string,
  ports: { http: number; grpc: number },
  backends: { dbUrl: string; redisUrl: string; mediaUrl: string },
): Record<string, string> {
  return {
    ROOMS_NODE_ID: name,
    ROOMS_DB_URL: backends.dbUrl,
    ROOMS_DB_POOL_SIZE: '6',
    ROOMS_REDIS_URL: backends.redisUrl,
    ROOMS_KEY_PREFIX: KEY_PREFIX,
    ROOMS_HTTP_HOST: '127.0.0.1',
    ROOMS_HTTP_PORT: String(ports.http),
    ROOMS_GRPC_HOST: '127.0.0.1',
    ROOMS_GRPC_PORT: String(ports.grpc),
    ROOMS_ADVERTISE_ADDR: `127.0.0.1:${ports.grpc}`,
    ROOMS_GRPC_TOKEN: GRPC_TOKEN,
    ROOMS_JWT_SECRET: 'chaos-jwt-secret-0123456789abcdef0123',
    ROOMS_ADMIN_TOKEN: ADMIN_TOKEN,
    ROOMS_LEASE_TTL_MS: String(LEASE_TTL_MS),
    ROOMS_SWEEP_INTERVAL_MS: '500',
    ROOMS_TIMER_TICK_MS: '100',
    ROOMS_PUBLISH_TIMEOUT_MS: String(PUBLISH_TIMEOUT_MS),
    ROOMS_TRTC_APPS: `${TRTC_SDK_APP_ID}:${APP}:${TRTC_KEY}`,
    // The webhook receiver listens on loopback.
    ROOMS_WEBHOOK_ALLOW_PRIVATE: '127.0.0.1',
    ROOMS_WEBHOOK_TIMEOUT_MS: '1000',
    ROOMS_OUTBOX_LOCK_MS: '3000',
    ROOMS_OUTBOX_POLL_MS: '100',
    ROOMS_OUTBOX_RETRY_BASE_MS: '50',
    ROOMS_OUTBOX_RETRY_MAX_MS: '500',
    // Failed deliveries are on purpose: no event may run out of attempts in the run.
    ROOMS_OUTBOX_MAX_ATTEMPTS: '1000',
    ROOMS_BCRYPT_COST: '4',
    ROOMS_LOG_LEVEL: 'warn',
    // One media server for the cluster, as scripts/cluster.mjs runs it: meetings get routers.
    ROOMS_MEDIA_EMBEDDED: 'false',
    ROOMS_MEDIA_URL: backends.mediaUrl,
    ROOMS_MEDIA_INTERNAL_TOKEN: MEDIA_TOKEN,
  };
}

/** Starts MariaDB, Redis and the three nodes; resolves once every node is healthy. */
export async function startChaosCluster(): Promise<ChaosCluster> {
  const mariadb = await startPrivateMariadb({ serverArgs: ['--innodb-lock-wait-timeout=5'] });
  let redis: PrivateRedis | undefined;
  let media: ServerProcess | undefined;
  const nodes: ChaosNode[] = [];
  try {
    redis = await startPrivateRedis();
    const dbUrl = await mariadb.createDatabase('rooms_chaos');
    const mediaPort = await freePort();
    const mediaUrl = `http://127.0.0.1:${mediaPort}`;
    media = new ServerProcess(
      'media',
      {
        ROOMS_NODE_ID: 'chaos',
        ROOMS_MEDIA_PORT: String(mediaPort),
        ROOMS_MEDIA_INTERNAL_TOKEN: MEDIA_TOKEN,
        ROOMS_MEDIA_WORKERS: '1',
        ROOMS_LOG_LEVEL: 'warn',
      },
      'src/media-server/main.ts',
    );
    await waitForHealthy(media, mediaUrl, READY_MS);
    const backends = { dbUrl, redisUrl: redis.url, mediaUrl };
    const envs = new Map<string, Record<string, string>>();
    for (const name of NODE_NAMES) {
      const ports = { http: await freePort(), grpc: await freePort() };
      const env = nodeEnv(name, ports, backends);
      envs.set(name, env);
      const process = new ServerProcess(name, env);
      nodes.push({
        name,
        grpc: `127.0.0.1:${ports.grpc}`,
        http: `http://127.0.0.1:${ports.http}`,
        process,
        generations: [process],
        stopped: false,
      });
    }
    await Promise.all(nodes.map((n) => waitForHealthy(n.process, n.http, READY_MS)));

    const killAndRestart = async (node: ChaosNode): Promise<void> => {
      node.process.child.kill('SIGKILL');
      await node.process.exited;
      node.stopped = false;
      node.process = new ServerProcess(node.name, envs.get(node.name)!);
      node.generations.push(node.process);
      await waitForHealthy(node.process, node.http, READY_MS);
    };
    const started = redis;
    const mediaServer = media;
    const leases = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    leases.on('error', () => undefined); // Redis is killed on purpose; a lookup may fail
    await leases.connect();
    return {
      mariadb,
      redis: started,
      dbUrl,
      nodes,
      killAndRestart,
      async ownerOf(roomId) {
        const value = await leases.get(`${KEY_PREFIX}lease:${APP}\u0000${roomId}`);
        return value?.split('\n')[0] ?? null;
      },
      pause(node) {
        node.stopped = true;
        node.process.child.kill('SIGSTOP');
      },
      resume(node) {
        node.process.child.kill('SIGCONT');
        node.stopped = false;
      },
      async stopNodes() {
        for (const node of nodes) if (node.stopped) node.process.child.kill('SIGCONT');
        await Promise.all(nodes.map((n) => n.process.stop(20_000)));
      },
      async stopBackends() {
        leases.disconnect();
        await mediaServer.stop();
        await started.stop();
        await mariadb.stop();
      },
      async saveLogs(dir) {
        await mkdir(dir, { recursive: true });
        for (const node of nodes) {
          const text = node.generations.map((p, i) => `### start ${i + 1}\n${p.output()}`);
          await writeFile(path.join(dir, `${node.name}.log`), text.join('\n'));
        }
      },
    };
  } catch (error) {
    await Promise.all(nodes.map((n) => n.process.stop().catch(() => undefined)));
    await media?.stop();
    await redis?.stop();
    await mariadb.stop();
    throw error;
  }
}
