/**
 * {@link RoomMediaState} in this process (embedded mode): per meeting, per user, the
 * records with one expiry that every write and `touch` pushes back. Expired records are
 * treated as absent at once and dropped on the next access (and by a sweep every so
 * many writes), so memory does not grow with forgotten meetings.
 */
import { routeKey, type CellKey } from '../../cell/lease.js';
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
import { systemClock, type Clock } from '../../shared/clock.js';

/** The seed's TTL of a user's resources set: 1 hour. */
export const MEETING_MEDIA_TTL_MS = 60 * 60 * 1000;
const SWEEP_EVERY_WRITES = 1_000;

interface Entry {
  readonly transports: Map<string, TransportDirection>;
  readonly producers: Map<string, { kind: MediaKind; source?: ProducerSource | undefined }>;
  readonly consumers: Map<string, string>;
  expiresAtMs: number;
}

export class MemoryRoomMediaState implements RoomMediaState {
  /** routeKey(meeting) → user → records. */
  readonly #meetings = new Map<
    string,
    { readonly key: CellKey; readonly users: Map<string, Entry> }
  >();
  readonly #clock: Clock;
  readonly #ttlMs: number;
  #writes = 0;

  constructor(options: { clock?: Clock; ttlMs?: number } = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#ttlMs = options.ttlMs ?? MEETING_MEDIA_TTL_MS;
  }

  addTransport(meeting: CellKey, userId: string, transport: TransportRecord): Promise<void> {
    this.#write(meeting, userId).transports.set(transport.id, transport.direction);
    return Promise.resolve();
  }

  addProducer(meeting: CellKey, userId: string, producer: ProducerRecord): Promise<void> {
    const { kind, source } = producer;
    this.#write(meeting, userId).producers.set(producer.id, { kind, source });
    return Promise.resolve();
  }

  addConsumer(meeting: CellKey, userId: string, consumer: ConsumerRecord): Promise<void> {
    this.#write(meeting, userId).consumers.set(consumer.id, consumer.producerId);
    return Promise.resolve();
  }

  resources(meeting: CellKey, userId: string): Promise<UserMediaResources> {
    const entry = this.#live(meeting)?.get(userId);
    return Promise.resolve({
      transports: [...(entry?.transports ?? [])].map(([id, direction]) => ({ id, direction })),
      producers: [...(entry?.producers ?? [])].map(([id, { kind }]) => ({ id, kind })),
      consumers: [...(entry?.consumers ?? [])].map(([id, producerId]) => ({ id, producerId })),
    });
  }

  forget(meeting: CellKey, userId: string, ids: MediaResourceIds): Promise<void> {
    const users = this.#live(meeting);
    const entry = users?.get(userId);
    if (!users || !entry) return Promise.resolve();
    for (const id of ids.transports ?? []) entry.transports.delete(id);
    for (const id of ids.producers ?? []) entry.producers.delete(id);
    for (const id of ids.consumers ?? []) entry.consumers.delete(id);
    if (entry.transports.size + entry.producers.size + entry.consumers.size === 0) {
      this.#drop(meeting, userId);
    }
    return Promise.resolve();
  }

  clear(meeting: CellKey, userId: string): Promise<void> {
    this.#drop(meeting, userId);
    return Promise.resolve();
  }

  liveProducers(meeting: CellKey): Promise<LiveProducer[]> {
    const out: LiveProducer[] = [];
    for (const [userId, entry] of this.#live(meeting) ?? []) {
      for (const [producerId, { kind, source }] of entry.producers) {
        out.push({ userId, producerId, kind, ...(source ? { source } : {}) });
      }
    }
    return Promise.resolve(out);
  }

  consumerRoom(appCode: string, userId: string, consumerId: string): Promise<string | null> {
    // Linear in the node's meetings: fine for embedded mode's sizes.
    for (const { key } of [...this.#meetings.values()]) {
      if (key.appCode !== appCode) continue;
      if (this.#live(key)?.get(userId)?.consumers.has(consumerId)) {
        return Promise.resolve(key.roomId);
      }
    }
    return Promise.resolve(null);
  }

  touch(meeting: CellKey, userId: string): Promise<void> {
    const entry = this.#live(meeting)?.get(userId);
    if (entry) entry.expiresAtMs = this.#clock.nowMs() + this.#ttlMs;
    return Promise.resolve();
  }

  /** The meeting's users whose records have not expired (expired ones are dropped). */
  #live(meeting: CellKey): Map<string, Entry> | undefined {
    const route = routeKey(meeting);
    const found = this.#meetings.get(route);
    if (!found) return undefined;
    const now = this.#clock.nowMs();
    for (const [userId, entry] of found.users) {
      if (entry.expiresAtMs <= now) found.users.delete(userId);
    }
    if (found.users.size === 0) {
      this.#meetings.delete(route);
      return undefined;
    }
    return found.users;
  }

  #write(meeting: CellKey, userId: string): Entry {
    if (++this.#writes % SWEEP_EVERY_WRITES === 0) this.#sweep();
    const route = routeKey(meeting);
    let found = this.#live(meeting);
    if (!found) {
      found = new Map();
      this.#meetings.set(route, { key: { ...meeting }, users: found });
    }
    let entry = found.get(userId);
    if (!entry) {
      entry = { transports: new Map(), producers: new Map(), consumers: new Map(), expiresAtMs: 0 };
      found.set(userId, entry);
    }
    entry.expiresAtMs = this.#clock.nowMs() + this.#ttlMs;
    return entry;
  }

  #drop(meeting: CellKey, userId: string): void {
    const route = routeKey(meeting);
    const found = this.#meetings.get(route);
    if (!found) return;
    found.users.delete(userId);
    if (found.users.size === 0) this.#meetings.delete(route);
  }

  #sweep(): void {
    for (const { key } of [...this.#meetings.values()]) this.#live(key);
  }
}
