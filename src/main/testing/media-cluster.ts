/**
 * Test helper: standalone media servers (`src/media-server/main.ts`) as real child processes,
 * registered in a Redis media directory, and the calls a test makes of them (rooms, drain).
 * A child can be killed with SIGKILL to play a dead machine.
 */
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MediaServerRecord } from '../../media-cluster/media-placement.js';
import { READY_TIMEOUT_MS, ServerProcess } from '../../testing/server-process.js';

/** The cluster's shared internal token (nodes and media servers). */
export const CLUSTER_MEDIA_TOKEN = 'media-cluster-internal-token-0123';

export interface RegisteredMediaServer {
  readonly id: string;
  readonly process: ServerProcess;
  /** Its internal API, as registered. */
  readonly url: string;
}

/** The record of `id` in the directory, or null (never registered, or expired). */
export async function mediaRecord(
  redis: Redis,
  keyPrefix: string,
  id: string,
): Promise<MediaServerRecord | null> {
  const raw = await redis.get(`${keyPrefix}media:server:${id}`);
  return raw ? (JSON.parse(raw) as MediaServerRecord) : null;
}

/** Polls the directory until `id`'s record matches (or throws after `timeoutMs`). */
export async function waitForRecord(
  redis: Redis,
  keyPrefix: string,
  id: string,
  match: (record: MediaServerRecord | null) => boolean,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<MediaServerRecord | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = await mediaRecord(redis, keyPrefix, id);
    if (match(record)) return record;
    if (Date.now() > deadline) throw new Error(`media server ${id}: no matching record in time`);
    await sleep(100);
  }
}

/** Starts `npm run start:media` registered under `id`; resolves once its record is there. */
export async function spawnMediaServer(options: {
  readonly id: string;
  readonly redisUrl: string;
  readonly keyPrefix: string;
  /** The RTC port range of its transports (each server its own). */
  readonly rtcPorts: readonly [number, number];
  readonly ttlMs?: number;
  /** More variables of the server (e.g. `ROOMS_MEDIA_EDGE_LINGER_MS`). */
  readonly env?: Readonly<Record<string, string>>;
}): Promise<RegisteredMediaServer> {
  const { id, redisUrl, keyPrefix } = options;
  const process = new ServerProcess(
    id,
    {
      ROOMS_MEDIA_SERVER_ID: id,
      ROOMS_MEDIA_REDIS_URL: redisUrl,
      ROOMS_KEY_PREFIX: keyPrefix,
      ROOMS_MEDIA_INTERNAL_TOKEN: CLUSTER_MEDIA_TOKEN,
      ROOMS_MEDIA_PORT: '0',
      ROOMS_MEDIA_WORKERS: '1',
      ROOMS_MEDIA_RTC_MIN_PORT: String(options.rtcPorts[0]),
      ROOMS_MEDIA_RTC_MAX_PORT: String(options.rtcPorts[1]),
      ROOMS_MEDIA_REGISTRATION_TTL_MS: String(options.ttlMs ?? 1_500),
      ROOMS_LOG_LEVEL: 'info',
      ...options.env,
    },
    'src/media-server/main.ts',
  );
  const redis = new Redis(redisUrl);
  try {
    const record = await Promise.race([
      waitForRecord(redis, keyPrefix, id, (r) => r !== null),
      process.exited.then(() => {
        throw new Error(`${id} exited before registering:\n${process.output()}`);
      }),
    ]);
    return { id, process, url: record!.url };
  } finally {
    redis.disconnect();
  }
}

/** `GET /internal/v1/rooms` of a media server: the media rooms with a router there. */
export async function roomsOn(server: RegisteredMediaServer): Promise<string[]> {
  const data = await internal<{ room_codes: string[] }>(server, 'GET', '/internal/v1/rooms');
  return data.room_codes.sort();
}

/** The router id a media server holds for a media room (`GET …/rooms/:room_code/router`). */
export async function routerOn(server: RegisteredMediaServer, room: string): Promise<string> {
  const path = `/internal/v1/rooms/${encodeURIComponent(room)}/router`;
  return (await internal<{ router_id: string }>(server, 'GET', path)).router_id;
}

/** What a media server holds now (`GET /internal/info`'s stats). */
export async function mediaStats(server: RegisteredMediaServer): Promise<{
  routers: number;
  transports: number;
  producers: number;
  consumers: number;
}> {
  type Info = { stats: Awaited<ReturnType<typeof mediaStats>> };
  return (await internal<Info>(server, 'GET', '/internal/info')).stats;
}

/** Drains (or undrains) a media server through its internal API. */
export async function drainMediaServer(
  server: RegisteredMediaServer,
  draining: boolean,
): Promise<void> {
  await internal(server, 'POST', '/internal/v1/drain', { draining });
}

async function internal<T = unknown>(
  server: RegisteredMediaServer,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      'x-internal-token': CLUSTER_MEDIA_TOKEN,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  });
  const envelope = (await res.json()) as { data: T; message?: string };
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${envelope.message ?? ''}`);
  return envelope.data;
}

/**
 * The environment of a rooms node of such a cluster (MariaDB + Redis, no embedded media
 * server; its own server `own`, the others through the directory).
 */
export function clusterNodeEnv(options: {
  readonly nodeId: string;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly own: RegisteredMediaServer;
  readonly extra?: Readonly<Record<string, string>>;
}): Record<string, string> {
  return {
    ROOMS_NODE_ID: options.nodeId,
    ROOMS_DB_URL: options.databaseUrl,
    ROOMS_DB_POOL_SIZE: '4',
    ROOMS_REDIS_URL: options.redisUrl,
    ROOMS_KEY_PREFIX: options.keyPrefix,
    ROOMS_JWT_SECRET: 'media-cluster-secret-0123456789abcdef',
    ROOMS_GRPC_TOKEN: 'media-cluster-grpc-token-0123456789',
    ROOMS_HTTP_HOST: '127.0.0.1',
    ROOMS_HTTP_PORT: '0',
    ROOMS_GRPC_PORT: '0',
    ROOMS_MEDIA_EMBEDDED: 'false',
    ROOMS_MEDIA_URL: options.own.url,
    ROOMS_MEDIA_SERVER_ID: options.own.id,
    ROOMS_MEDIA_INTERNAL_TOKEN: CLUSTER_MEDIA_TOKEN,
    ROOMS_MEDIA_TIMEOUT_MS: '1500',
    ROOMS_LOG_LEVEL: 'silent',
    ROOMS_BCRYPT_COST: '4',
    ...options.extra,
  };
}
