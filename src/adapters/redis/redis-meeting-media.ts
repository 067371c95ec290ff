/**
 * {@link RoomMediaState} on Redis, shared by every node. Keys, under the deployment's
 * prefix (`ROOMS_KEY_PREFIX`), with app, room and user URI-encoded:
 * - `{prefix}meeting:resources:{app}:{room}:{user}` HASH, the seed's per-user set:
 *   `t:{id}` → direction, `p:{id}` → kind, `c:{id}` → producer id, each followed by
 *   `|{holder}`, the node process whose socket made it (../redis/media-holders.ts);
 * - `{prefix}meeting:producers:{app}:{room}` HASH: producer id → `{"u":user,"k":kind,"s":source}`
 *   (the meeting's live producers, for late joiners);
 * - `{prefix}meeting:consumers:{app}:{user}` HASH: consumer id → room code (for
 *   `meeting.consume.resume {consumer_id}`, which names no meeting).
 * Each write is one MULTI (or one Lua script) that also restarts the keys' PEXPIRE (1 h).
 * A live producer whose user's hash expired is left out when listing, and dropped.
 * Redis failures are `unavailable` (the signalling answers them as such; retryable).
 */
import type { Redis } from 'ioredis';
import type { CellKey } from '../../cell/lease.js';
import type {
  ConsumerRecord,
  LiveProducer,
  MediaResourceIds,
  RoomMediaState,
  ProducerRecord,
  ProducerSource,
  TransportRecord,
  UserMediaResources,
} from '../../edge/room-media/ports.js';
import type { MediaKind, TransportDirection } from '../../media-cluster/media-orchestrator.js';
import { errors } from '../../shared/error-codes.js';
import { MEETING_MEDIA_TTL_MS } from '../memory/memory-meeting-media.js';

// KEYS[1] the user's hash, [2] the meeting's producers, [3] the user's consumers. Drops the
// user's records and their entries in both indexes.
const CLEAR = `
local fields = redis.call('HKEYS', KEYS[1])
for _, f in ipairs(fields) do
  local kind, id = string.sub(f, 1, 1), string.sub(f, 3)
  if kind == 'p' then redis.call('HDEL', KEYS[2], id) end
  if kind == 'c' then redis.call('HDEL', KEYS[3], id) end
end
redis.call('DEL', KEYS[1])
return #fields
`;

interface MediaCommands {
  roomsMeetingMediaClear(user: string, producers: string, consumers: string): Promise<number>;
}

const enc = encodeURIComponent;

export class RedisRoomMediaState implements RoomMediaState {
  readonly #redis: Redis & MediaCommands;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #tag: string;

  /**
   * @param keyPrefix the deployment's prefix (`ROOMS_KEY_PREFIX`), e.g. `rooms:`.
   * @param holder what this process's records are tagged with (none: untagged).
   */
  constructor(deps: { redis: Redis; keyPrefix: string; ttlMs?: number; holder?: string }) {
    deps.redis.defineCommand('roomsMeetingMediaClear', { numberOfKeys: 3, lua: CLEAR });
    this.#redis = deps.redis as Redis & MediaCommands;
    this.#prefix = `${deps.keyPrefix}meeting:`;
    this.#ttlMs = deps.ttlMs ?? MEETING_MEDIA_TTL_MS;
    this.#tag = deps.holder ? `|${deps.holder}` : '';
  }

  addTransport(meeting: CellKey, userId: string, transport: TransportRecord): Promise<void> {
    const user = this.#userKey(meeting, userId);
    return this.#exec((m) =>
      m.hset(user, `t:${transport.id}`, transport.direction + this.#tag).pexpire(user, this.#ttlMs),
    );
  }

  addProducer(meeting: CellKey, userId: string, producer: ProducerRecord): Promise<void> {
    const user = this.#userKey(meeting, userId);
    const live = this.#producersKey(meeting);
    const value = JSON.stringify({
      u: userId,
      k: producer.kind,
      ...(producer.source ? { s: producer.source } : {}),
    });
    return this.#exec((m) =>
      m
        .hset(user, `p:${producer.id}`, producer.kind + this.#tag)
        .pexpire(user, this.#ttlMs)
        .hset(live, producer.id, value)
        .pexpire(live, this.#ttlMs),
    );
  }

  addConsumer(meeting: CellKey, userId: string, consumer: ConsumerRecord): Promise<void> {
    const user = this.#userKey(meeting, userId);
    const index = this.#consumersKey(meeting.appCode, userId);
    return this.#exec((m) =>
      m
        .hset(user, `c:${consumer.id}`, consumer.producerId + this.#tag)
        .pexpire(user, this.#ttlMs)
        .hset(index, consumer.id, meeting.roomId)
        .pexpire(index, this.#ttlMs),
    );
  }

  async resources(meeting: CellKey, userId: string): Promise<UserMediaResources> {
    const hash = await this.#call(() => this.#redis.hgetall(this.#userKey(meeting, userId)));
    const transports: TransportRecord[] = [];
    const producers: ProducerRecord[] = [];
    const consumers: ConsumerRecord[] = [];
    for (const [field, tagged] of Object.entries(hash)) {
      const id = field.slice(2);
      const [value = '', holder] = tagged.split('|', 2);
      const by = holder ? { holder } : {};
      if (field.startsWith('t:')) {
        transports.push({ id, direction: value as TransportDirection, ...by });
      } else if (field.startsWith('p:')) producers.push({ id, kind: value as MediaKind, ...by });
      else if (field.startsWith('c:')) consumers.push({ id, producerId: value, ...by });
    }
    return { transports, producers, consumers };
  }

  forget(meeting: CellKey, userId: string, ids: MediaResourceIds): Promise<void> {
    const fields = [
      ...(ids.transports ?? []).map((id) => `t:${id}`),
      ...(ids.producers ?? []).map((id) => `p:${id}`),
      ...(ids.consumers ?? []).map((id) => `c:${id}`),
    ];
    if (fields.length === 0) return Promise.resolve();
    const producers = ids.producers ?? [];
    const consumers = ids.consumers ?? [];
    return this.#exec((m) => {
      m.hdel(this.#userKey(meeting, userId), ...fields);
      if (producers.length > 0) m.hdel(this.#producersKey(meeting), ...producers);
      if (consumers.length > 0) {
        m.hdel(this.#consumersKey(meeting.appCode, userId), ...consumers);
      }
      return m;
    });
  }

  async clear(meeting: CellKey, userId: string): Promise<void> {
    await this.#call(() =>
      this.#redis.roomsMeetingMediaClear(
        this.#userKey(meeting, userId),
        this.#producersKey(meeting),
        this.#consumersKey(meeting.appCode, userId),
      ),
    );
  }

  async liveProducers(meeting: CellKey): Promise<LiveProducer[]> {
    const key = this.#producersKey(meeting);
    const hash = await this.#call(() => this.#redis.hgetall(key));
    const listed: LiveProducer[] = [];
    for (const [producerId, value] of Object.entries(hash)) {
      try {
        const { u, k, s } = JSON.parse(value) as { u: string; k: MediaKind; s?: ProducerSource };
        listed.push({ userId: u, producerId, kind: k, ...(s ? { source: s } : {}) });
      } catch {
        // Not ours (written by hand): ignored.
      }
    }
    if (listed.length === 0) return listed;
    // A producer whose user's records expired (a node died before its clean-up) is gone.
    const pipeline = this.#redis.pipeline();
    for (const p of listed) pipeline.hexists(this.#userKey(meeting, p.userId), `p:${p.producerId}`);
    const exists = await this.#call(() => pipeline.exec());
    const live = listed.filter((_, i) => exists?.[i]?.[1] === 1);
    const stale = listed.filter((_, i) => exists?.[i]?.[1] === 0).map((p) => p.producerId);
    if (stale.length > 0) this.#redis.hdel(key, ...stale).catch(() => undefined);
    return live;
  }

  async consumerRoom(appCode: string, userId: string, consumerId: string): Promise<string | null> {
    const room = await this.#call(() =>
      this.#redis.hget(this.#consumersKey(appCode, userId), consumerId),
    );
    if (room === null) return null;
    // The index may outlive the user's records in that meeting (they expired first).
    const held = await this.#call(() =>
      this.#redis.hexists(this.#userKey({ appCode, roomId: room }, userId), `c:${consumerId}`),
    );
    return held === 1 ? room : null;
  }

  touch(meeting: CellKey, userId: string): Promise<void> {
    return this.#exec((m) =>
      m
        .pexpire(this.#userKey(meeting, userId), this.#ttlMs)
        .pexpire(this.#producersKey(meeting), this.#ttlMs)
        .pexpire(this.#consumersKey(meeting.appCode, userId), this.#ttlMs),
    );
  }

  #userKey(meeting: CellKey, userId: string): string {
    return `${this.#prefix}resources:${enc(meeting.appCode)}:${enc(meeting.roomId)}:${enc(userId)}`;
  }

  #producersKey(meeting: CellKey): string {
    return `${this.#prefix}producers:${enc(meeting.appCode)}:${enc(meeting.roomId)}`;
  }

  #consumersKey(appCode: string, userId: string): string {
    return `${this.#prefix}consumers:${enc(appCode)}:${enc(userId)}`;
  }

  async #exec(build: (m: ReturnType<Redis['multi']>) => ReturnType<Redis['multi']>): Promise<void> {
    const results = await this.#call(() => build(this.#redis.multi()).exec());
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw errors.MEDIA_STATE_UNAVAILABLE.withCause(failed?.[0]);
  }

  async #call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw errors.MEDIA_STATE_UNAVAILABLE.withCause(error);
    }
  }
}
