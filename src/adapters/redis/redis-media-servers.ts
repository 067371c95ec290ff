/**
 * The {@link MediaServers} directory of a cluster: the media servers registered in Redis
 * (./media-server-records.ts), read every `refreshMs` into a snapshot, so `place()` stays
 * synchronous. `place()` is the least loaded live server that is not draining (counting the
 * rooms this node placed since the snapshot); `of(id)` an HTTP client per server (kept
 * while it lives, with the cluster's shared internal token); `ids()` the live ones.
 *
 * The node's own media server (embedded, or `ROOMS_MEDIA_URL`) is always known under its
 * id, registered or not, so a cluster whose servers do not register works as before: while
 * no registered server is live, rooms go on it. A registered id whose record expired is
 * reported to the listeners' `onDead` at every refresh until its rooms moved
 * (src/media-cluster/media-failover.ts).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { MediaOrchestrator } from '../../media-cluster/media-orchestrator.js';
import {
  leastLoaded,
  withOneMoreRouter,
  type MediaServerRecord,
} from '../../media-cluster/media-placement.js';
import { unreachableMediaServer, type MediaServers } from '../../media-cluster/media-servers.js';
import { MediaServerKeys } from './media-server-records.js';

export interface RedisMediaServersDeps {
  readonly redis: Redis;
  readonly keyPrefix: string;
  /** A client of a registered server (the cluster's internal token is the factory's). */
  readonly client: (url: string) => MediaOrchestrator & { close(): void };
  /** This node's own server, known without registering; null: none. */
  readonly own: { readonly id: string; readonly orchestrator: MediaOrchestrator } | null;
  readonly refreshMs?: number;
  readonly logger: Logger;
}

export interface DirectoryListener {
  /** A registered server stopped beating: its rooms must move. Called at each refresh. */
  onDead?(serverId: string): void;
  /** The live servers changed. */
  onLive?(live: ReadonlyMap<string, MediaServerRecord>): void;
}

export class RedisMediaServers implements MediaServers {
  readonly keys: MediaServerKeys;
  #live = new Map<string, MediaServerRecord>();
  #dead: readonly string[] = [];
  readonly #clients = new Map<
    string,
    { url: string; boot: string; client: MediaOrchestrator & { close(): void } }
  >();
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | null = null;
  #failing = false;
  #stopped = false;
  readonly #listeners: DirectoryListener[] = [];

  constructor(private readonly deps: RedisMediaServersDeps) {
    this.keys = new MediaServerKeys(deps.redis, deps.keyPrefix);
  }

  /** Reads the directory once, then every `refreshMs`. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), this.deps.refreshMs ?? 1_000);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    for (const { client } of this.#clients.values()) client.close();
    this.#clients.clear();
  }

  /** Hears every refresh's dead servers, and each change of the live ones. */
  listen(listener: DirectoryListener): void {
    this.#listeners.push(listener);
  }

  /** The live registered servers of the last snapshot. */
  get live(): ReadonlyMap<string, MediaServerRecord> {
    return this.#live;
  }

  /** The registered ids that stopped beating, as of the last snapshot. */
  get dead(): readonly string[] {
    return this.#dead;
  }

  /** Reads the directory now (one read at a time; a failure keeps the last snapshot). */
  refresh(): Promise<void> {
    return (this.#refreshing ??= this.#read().finally(() => (this.#refreshing = null)));
  }

  place(): string | null {
    const best = leastLoaded([...this.#live.values()]);
    if (best) {
      // Counted until the next snapshot, so a burst of creations spreads too.
      this.#live.set(best.id, withOneMoreRouter(best));
      return best.id;
    }
    const own = this.deps.own;
    const ownRecord = own && this.#live.get(own.id);
    if (!own || this.#dead.includes(own.id) || ownRecord?.draining) return null;
    return own.id;
  }

  ids(): string[] {
    const ids = new Set(this.#live.keys());
    if (this.deps.own && !this.#dead.includes(this.deps.own.id)) ids.add(this.deps.own.id);
    return [...ids];
  }

  of(serverId: string | null): MediaOrchestrator {
    if (serverId === null) return unreachableMediaServer();
    const own = this.deps.own;
    if (own && serverId === own.id) return own.orchestrator;
    // Not in this snapshot yet (registered within the last second): read again, once.
    const resolve = async () => {
      if (!this.#clientOf(serverId) && !this.#dead.includes(serverId)) await this.refresh();
      return this.#clientOf(serverId) ?? unreachableMediaServer();
    };
    return deferred(resolve, () => this.#clientOf(serverId) ?? unreachableMediaServer());
  }

  async lostBoot(serverId: string): Promise<string | null> {
    await this.refresh();
    if (this.#live.has(serverId)) return null;
    return this.keys.lostBoot(serverId, this.#dead.includes(serverId));
  }

  #clientOf(serverId: string): MediaOrchestrator | null {
    const record = this.#live.get(serverId);
    if (!record) return null;
    const cached = this.#clients.get(serverId);
    if (cached?.url === record.url) {
      // Restarted at the same address: none of the routers it had are there any more.
      if (cached.boot !== record.boot) cached.client.forgetRouters();
      cached.boot = record.boot;
      return cached.client;
    }
    cached?.client.close();
    const client = this.deps.client(record.url);
    this.#clients.set(serverId, { url: record.url, boot: record.boot, client });
    return client;
  }

  async #read(): Promise<void> {
    if (this.#stopped) return;
    let snapshot;
    try {
      snapshot = await this.keys.snapshot();
    } catch (err) {
      if (!this.#failing) this.deps.logger.warn({ err }, 'reading the media directory failed');
      this.#failing = true;
      return;
    }
    this.#failing = false;
    const before = [...this.#live.keys()].sort().join(',');
    this.#live = new Map(snapshot.live);
    this.#dead = snapshot.dead;
    for (const [id, { client }] of this.#clients) {
      if (!this.#live.has(id)) {
        client.close();
        this.#clients.delete(id);
      }
    }
    const changed = [...this.#live.keys()].sort().join(',') !== before;
    for (const listener of this.#listeners) {
      if (changed) listener.onLive?.(this.#live);
      for (const id of this.#dead) listener.onDead?.(id);
    }
  }
}

type CacheMethod = 'resolveRouterInfo' | 'forgetRouter' | 'forgetRouters';
type AsyncMethod = Exclude<keyof MediaOrchestrator, CacheMethod>;
/** Every call a remote server's orchestrator forwards: the record makes a missing one a type error. */
const FORWARDED: Record<AsyncMethod, true> = {
  createRouter: true,
  closeRouter: true,
  createTransport: true,
  connectTransport: true,
  createPlainTransport: true,
  connectPlainTransport: true,
  createProducer: true,
  createConsumer: true,
  resumeConsumer: true,
  setConsumerPreferences: true,
  recordingSupported: true,
  startRecording: true,
  stopRecording: true,
  recording: true,
  recordingFile: true,
  setProducerPaused: true,
  closeTransport: true,
  closeProducer: true,
  closeConsumer: true,
  listRooms: true,
  listProducers: true,
};
const ASYNC_METHODS = Object.keys(FORWARDED) as AsyncMethod[];

/** An orchestrator whose target is found when a call is made (cached routers: the current one). */
export function deferred(
  resolve: () => Promise<MediaOrchestrator>,
  now: () => MediaOrchestrator,
): MediaOrchestrator {
  const calls: Partial<Record<AsyncMethod, unknown>> = {};
  for (const name of ASYNC_METHODS) {
    calls[name] = async (...args: unknown[]) => {
      const target = await resolve();
      return (target[name] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
    };
  }
  return {
    ...(calls as Omit<MediaOrchestrator, CacheMethod>),
    resolveRouterInfo: (room) => now().resolveRouterInfo(room),
    forgetRouter: (room, routerId) => now().forgetRouter(room, routerId),
    forgetRouters: () => now().forgetRouters(),
  };
}
