/**
 * The media servers' directory in Redis, under the deployment's prefix (`ROOMS_KEY_PREFIX`):
 * - `{prefix}media:server:{id}`: the server's {@link MediaServerRecord} (JSON) with a `PX`
 *   TTL of a few seconds, rewritten every heartbeat: it is gone a TTL after the server died;
 * - `{prefix}media:servers`: ZSET of every registered id (score: its last heartbeat), so a
 *   server whose record expired is still known, as dead, until its rooms moved;
 * - `{prefix}media:server-rooms:{id}`: the media room names (`<kind>:<app>:<room>`) that
 *   have a router there, written when they change: what must move when it dies.
 * - `{prefix}media:server-gone:{id}`: the boot of a dead server that left the directory once
 *   its listed rooms moved, for a day: a room recorded there that the list missed (its router
 *   was made after the last beat) is moved when it is next used, under the same request id.
 * A clean stop without rooms removes the first three; a stop that leaves rooms behind removes
 * only the record, so the nodes move those rooms as for a death.
 */
import type { Redis } from 'ioredis';
import type { MediaServerRecord } from '../../media-cluster/media-placement.js';

/** Rooms lists outlive their server by at most this (a dead server's rooms move within seconds). */
const ROOMS_TTL_MS = 24 * 3_600_000;

export interface MediaServerSnapshot {
  /** Registered servers whose record is current, by id. */
  readonly live: ReadonlyMap<string, MediaServerRecord>;
  /** Registered ids without a current record: stopped beating (died, or stopped with rooms). */
  readonly dead: readonly string[];
}

export class MediaServerKeys {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  record(id: string): string {
    return `${this.prefix}media:server:${id}`;
  }
  get index(): string {
    return `${this.prefix}media:servers`;
  }
  rooms(id: string): string {
    return `${this.prefix}media:server-rooms:${id}`;
  }
  gone(id: string): string {
    return `${this.prefix}media:server-gone:${id}`;
  }

  /** One heartbeat: the record (with its TTL), the index, and the rooms when given. */
  async beat(record: MediaServerRecord, ttlMs: number, rooms?: readonly string[]): Promise<void> {
    const multi = this.redis
      .multi()
      .set(this.record(record.id), JSON.stringify(record), 'PX', ttlMs)
      .zadd(this.index, record.at_ms, record.id);
    if (rooms) {
      multi.set(
        this.rooms(record.id),
        JSON.stringify({ boot: record.boot, rooms }),
        'PX',
        ROOMS_TTL_MS,
      );
    }
    const results = await multi.exec();
    const failed = results?.find(([error]) => error);
    if (failed) throw failed[0]!;
  }

  /** A clean stop: gone from the directory; with rooms left, they move as for a death. */
  async stop(id: string, roomsLeft: boolean): Promise<void> {
    if (roomsLeft) {
      await this.redis.del(this.record(id));
      return;
    }
    await this.redis
      .multi()
      .del(this.record(id))
      .zrem(this.index, id)
      .del(this.rooms(id))
      .del(this.gone(id))
      .exec();
  }

  /** Every registered server, live or dead. */
  async snapshot(): Promise<MediaServerSnapshot> {
    const ids = await this.redis.zrange(this.index, '0', '-1');
    if (ids.length === 0) return { live: new Map(), dead: [] };
    const values = await this.redis.mget(ids.map((id) => this.record(id)));
    const live = new Map<string, MediaServerRecord>();
    const dead: string[] = [];
    ids.forEach((id, i) => {
      const record = parseRecord(values[i] ?? null);
      if (record && record.id === id) live.set(id, record);
      else dead.push(id);
    });
    return { live, dead };
  }

  /** The rooms a server last reported, and its boot then (none when it never did). */
  async roomsOf(id: string): Promise<{ boot: string; rooms: string[] }> {
    const raw = await this.redis.get(this.rooms(id));
    const none = { boot: '', rooms: [] };
    if (!raw) return none;
    try {
      const parsed = JSON.parse(raw) as { boot?: unknown; rooms?: unknown };
      if (typeof parsed.boot !== 'string' || !Array.isArray(parsed.rooms)) return none;
      const rooms = parsed.rooms.filter((r): r is string => typeof r === 'string');
      return { boot: parsed.boot, rooms };
    } catch {
      return none;
    }
  }

  /**
   * A dead server's rooms all moved: it leaves the directory, unless it came back meanwhile
   * (a record again: then it is live and keeps its entry).
   */
  async forgetDead(id: string): Promise<void> {
    if ((await this.redis.exists(this.record(id))) === 1) return;
    const { boot } = await this.roomsOf(id);
    await this.redis
      .multi()
      .zrem(this.index, id)
      .del(this.rooms(id))
      .set(this.gone(id), boot, 'PX', ROOMS_TTL_MS)
      .exec();
  }

  /**
   * The boot of a server without a current record: from its rooms list while it is still in
   * the index (`inIndex`, dead), else from its tombstone; null for an id never registered.
   */
  async lostBoot(id: string, inIndex: boolean): Promise<string | null> {
    if (inIndex) return (await this.roomsOf(id)).boot;
    return this.redis.get(this.gone(id));
  }
}

function parseRecord(raw: string | null): MediaServerRecord | null {
  if (!raw) return null;
  try {
    const r = JSON.parse(raw) as MediaServerRecord;
    const ok =
      typeof r.id === 'string' &&
      typeof r.url === 'string' &&
      typeof r.boot === 'string' &&
      typeof r.draining === 'boolean' &&
      typeof r.load?.routers === 'number' &&
      Array.isArray(r.load.worker_cpu);
    return ok ? r : null;
  } catch {
    return null;
  }
}
