/**
 * Which node process holds which users' media, so that what a dead node's sockets held on the
 * media servers can be released by the others (../../edge/room-media/orphan-media.ts). A
 * holder is one node process: `<ROOMS_NODE_ID>.<boot>` (a node restarted under its id is a
 * new holder; what the old one held is released all the same). Keys, under the deployment's
 * prefix:
 * - `{prefix}media:holder:{holder}`: written every `ttlMs / 3` with a `PX` TTL of `ttlMs`;
 *   gone `ttlMs` after the process died;
 * - `{prefix}media:holders`: ZSET of every holder (score: its last beat), so a dead one is
 *   still known until what it held was released;
 * - `{prefix}media:held:{holder}`: HASH, one field per (room kind, app, room, user) the
 *   holder's sockets made media in → the room's media server then (`''`: none recorded).
 * The resource records themselves carry their holder (../redis/redis-meeting-media.ts).
 * A clean stop, once the node's sockets released their media, removes the three.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { HeldMedia, MediaHolders } from '../../edge/room-media/ports.js';
import type { MediaRoomKind } from '../../media-cluster/media-servers.js';

/** How long a dead holder is claimed by the node releasing what it held. */
const CLAIM_MS = 60_000;
const HELD_TTL_MS = 24 * 3_600_000;

export class RedisMediaHolders implements MediaHolders {
  readonly self: string;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #failing = false;

  constructor(deps: {
    redis: Redis;
    keyPrefix: string;
    nodeId: string;
    ttlMs: number;
    logger: Logger;
  }) {
    this.#redis = deps.redis;
    this.#prefix = `${deps.keyPrefix}media:`;
    this.#ttlMs = deps.ttlMs;
    this.#logger = deps.logger.child({ module: 'media-holders' });
    this.self = `${deps.nodeId}.${randomBytes(4).toString('hex')}`;
  }

  /** Beats once, then every third of the TTL. */
  async start(): Promise<void> {
    await this.#beat();
    this.#timer = setInterval(() => void this.#beat(), Math.max(100, this.#ttlMs / 3));
    this.#timer.unref();
  }

  /** Leaves the directory (the node's sockets have released their media by now). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.forget(this.self).catch((err: unknown) =>
      this.#logger.warn({ err }, 'removing the media holder failed'),
    );
  }

  async hold(kind: MediaRoomKind, key: CellKey, userId: string, server: string | null) {
    const held = this.#held(this.self);
    // A day past the last hold: a live holder's entries of released users are dropped
    // by `unhold`; this only bounds what a missed one leaves.
    await this.#redis
      .multi()
      .hset(held, entryField(kind, key, userId), server ?? '')
      .pexpire(held, HELD_TTL_MS)
      .exec();
  }

  async unhold(kind: MediaRoomKind, key: CellKey, userId: string) {
    await this.#redis.hdel(this.#held(this.self), entryField(kind, key, userId));
  }

  async dead(): Promise<string[]> {
    const ids = await this.#redis.zrange(`${this.#prefix}holders`, '0', '-1');
    if (ids.length === 0) return [];
    const beats = await this.#redis.mget(ids.map((id) => this.#record(id)));
    return ids.filter((id, i) => beats[i] === null && id !== this.self);
  }

  async claim(holder: string): Promise<boolean> {
    const claimed = await this.#redis.set(
      `${this.#prefix}holder-release:${holder}`,
      this.self,
      'PX',
      CLAIM_MS,
      'NX',
    );
    return claimed === 'OK';
  }

  async heldBy(holder: string): Promise<HeldMedia[]> {
    const hash = await this.#redis.hgetall(this.#held(holder));
    const held: HeldMedia[] = [];
    for (const [field, server] of Object.entries(hash)) {
      const entry = parseField(field);
      if (entry) held.push({ ...entry, server: server || null });
    }
    return held;
  }

  async forget(holder: string): Promise<void> {
    await this.#redis
      .multi()
      .del(this.#held(holder), this.#record(holder))
      .zrem(`${this.#prefix}holders`, holder)
      .exec();
  }

  #record(holder: string): string {
    return `${this.#prefix}holder:${holder}`;
  }

  #held(holder: string): string {
    return `${this.#prefix}held:${holder}`;
  }

  async #beat(): Promise<void> {
    try {
      await this.#redis
        .multi()
        .set(this.#record(this.self), '1', 'PX', this.#ttlMs)
        .zadd(`${this.#prefix}holders`, Date.now(), this.self)
        .exec();
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.#logger.warn({ err }, 'media holder heartbeat failed');
      this.#failing = true;
    }
  }
}

function entryField(kind: MediaRoomKind, key: CellKey, userId: string): string {
  return JSON.stringify([kind, key.appCode, key.roomId, userId]);
}

function parseField(field: string): Omit<HeldMedia, 'server'> | null {
  try {
    const [kind, appCode, roomId, userId] = JSON.parse(field) as string[];
    if ((kind !== 'meeting' && kind !== 'voice_room') || !appCode || !roomId || !userId) {
      return null;
    }
    return { kind, key: { appCode, roomId }, userId };
  } catch {
    return null;
  }
}
