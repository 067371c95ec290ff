/**
 * A media server's place in the cluster's directory (src/adapters/redis/media-server-records.ts):
 * every `ttlMs / 3` it writes its id, internal URL, load (routers, transports, producers,
 * consumers, each worker's CPU share since the last beat) and draining flag with a TTL of
 * `ttlMs`, and the rooms it holds when they changed. Nodes place new rooms on the least
 * loaded live server that is not draining, and move the rooms of one whose record expired.
 * A beat that fails (Redis down) is logged once and retried at the next tick: the server
 * keeps serving its rooms meanwhile. The same directory names the other servers a room's
 * edge may open on (`peers`).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { MediaServerKeys } from '../adapters/redis/media-server-records.js';
import { createRedisClient } from '../adapters/redis/redis-client.js';
import { quitQuietly } from '../adapters/redis/redis-lease.js';
import { loadOrder, type MediaServerRecord } from '../media-cluster/media-placement.js';
import type { MediaRegistry } from './media-registry.js';
import type { PeerServer } from './peer-client.js';
import type { WorkerPool } from './worker-pool.js';

/** Where and how a media server registers (`ROOMS_MEDIA_REDIS_URL` and the rest). */
export interface MediaRegistrationSettings {
  /** The server's id: the one rooms record (`ROOMS_MEDIA_SERVER_ID`). */
  readonly id: string;
  readonly redisUrl: string;
  /** The deployment's key prefix (`ROOMS_KEY_PREFIX`), as the nodes use it. */
  readonly keyPrefix: string;
  /** The internal URL nodes call; null: the address the API is bound to. */
  readonly advertiseUrl: string | null;
  /** How long a record lives without a new beat (`ROOMS_MEDIA_REGISTRATION_TTL_MS`). */
  readonly ttlMs: number;
}

export class MediaServerHeartbeat {
  readonly boot = randomUUID();
  readonly #keys: MediaServerKeys;
  readonly #redis: Redis;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #draining = false;
  #stopped = false;
  #lastRooms: string | null = null;
  #failing = false;
  /** Per worker pid: CPU ms used and when, at the last beat. */
  readonly #cpu = new Map<number, { usedMs: number; atMs: number }>();
  #beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly settings: MediaRegistrationSettings,
    private readonly url: string,
    private readonly server: { readonly registry: MediaRegistry; readonly pool: WorkerPool },
    logger: Logger,
  ) {
    this.#logger = logger.child({ module: 'media-registration', server: settings.id });
    this.#redis = createRedisClient(
      settings.redisUrl,
      { maxRetriesPerRequest: 1, enableOfflineQueue: false },
      logger,
      'media-registration',
    );
    this.#keys = new MediaServerKeys(this.#redis, settings.keyPrefix);
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** The other live servers that are not draining, least loaded first. */
  async peers(): Promise<PeerServer[]> {
    const { live } = await this.#keys.snapshot();
    return [...live.values()]
      .filter((r) => r.id !== this.settings.id && !r.draining)
      .sort((a, b) => loadOrder(a.load, b.load) || (a.id < b.id ? -1 : 1))
      .map(({ id, url }) => ({ id, url }));
  }

  /** Registers (waits for Redis up to a few seconds for the first beat) and keeps beating. */
  async start(): Promise<void> {
    await this.#redis.ping().catch(() => undefined);
    await this.#beat();
    const every = Math.max(100, Math.floor(this.settings.ttlMs / 3));
    this.#timer = setInterval(() => {
      this.#beating = this.#beating.then(() => this.#beat());
    }, every);
    this.#timer.unref();
  }

  /** Draining: keeps its rooms, takes no new ones (said at once, not at the next beat). */
  async setDraining(draining: boolean): Promise<void> {
    this.#draining = draining;
    this.#logger.info({ draining }, draining ? 'media server draining' : 'media server undrained');
    this.#beating = this.#beating.then(() => this.#beat());
    await this.#beating;
  }

  /** Leaves the directory; with rooms left, the nodes move them (as for a death). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#beating;
    const roomsLeft = this.server.registry.roomCodes.length > 0;
    await this.#keys
      .stop(this.settings.id, roomsLeft)
      .catch((err: unknown) => this.#logger.warn({ err }, 'media server deregistration failed'));
    await quitQuietly(this.#redis);
  }

  async #beat(): Promise<void> {
    if (this.#stopped) return;
    try {
      const rooms = [...this.server.registry.roomCodes].sort();
      const roomsJson = JSON.stringify(rooms);
      const changed = roomsJson !== this.#lastRooms;
      await this.#keys.beat(await this.#record(), this.settings.ttlMs, changed ? rooms : undefined);
      this.#lastRooms = roomsJson;
      if (this.#failing) this.#logger.info('media server registration written again');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.#logger.warn({ err }, 'media server registration failed');
      this.#failing = true;
    }
  }

  async #record(): Promise<MediaServerRecord> {
    const now = Date.now();
    const worker_cpu: number[] = [];
    for (const slot of this.server.pool.slots) {
      if (!slot.alive) continue;
      const usage = await slot.worker.getResourceUsage().catch(() => null);
      if (!usage) continue;
      const usedMs = usage.ru_utime + usage.ru_stime;
      const before = this.#cpu.get(slot.worker.pid);
      this.#cpu.set(slot.worker.pid, { usedMs, atMs: now });
      const share =
        before && now > before.atMs
          ? Math.max(0, (usedMs - before.usedMs) / (now - before.atMs))
          : 0;
      worker_cpu.push(Math.round(share * 1000) / 1000);
    }
    return {
      id: this.settings.id,
      url: (this.settings.advertiseUrl ?? this.url).replace(/\/$/, ''),
      boot: this.boot,
      load: { ...this.server.registry.stats, worker_cpu },
      draining: this.#draining,
      at_ms: now,
    };
  }
}
