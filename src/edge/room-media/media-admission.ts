/**
 * What the media signalling lets a user make, and when a creation is undone.
 *
 * Caps: every WebRTC transport holds a UDP and a TCP port of the media server's range, so
 * one member who could make transports without end would take every port, and every other
 * room's media would fail. Each creation is counted against two caps before it reaches the
 * media server: the user's records in the room ({@link RoomMediaState}, shared by every node
 * in a cluster: what the user holds there through any node), and what this socket made that
 * is still recorded (in every room of the kind). A resource that closes (its producer closes,
 * its transport closes, its user leaves) is forgotten from the records, which frees its slot.
 * One user's creations on a node run one at a time, so requests sent together cannot all
 * pass the same count; creations through two nodes at once may each pass it once.
 *
 * Releases: a release reads what the user holds, then closes it. A creation that was still
 * on its way when a release of the same user's media in the room started (a kick, a leave,
 * the last socket closing) would be recorded after the release's read and outlive it; such a
 * creation is undone (closed, forgotten, never announced) and refused.
 *
 * A closed socket's media: what the socket made is listed here while it lives, so its close
 * releases exactly that ({@link MediaAdmission.socketClosed}), never what the same user made
 * through another socket (a reconnect that came first, another node). Its creations still
 * on their way are undone when they land.
 */
import { routeKey, type CellKey } from '../../cell/lease.js';
import { errors } from '../../shared/error-codes.js';
import type { RoomMediaState, UserMediaResources } from './ports.js';

export type MediaSlot = 'transports' | 'producers' | 'consumers';
export type MediaLimits = Readonly<Record<MediaSlot, number>>;

/** How much one user may hold in one room, and one socket in all rooms of a kind. */
export interface MediaCaps {
  readonly perUser: MediaLimits;
  readonly perSocket: MediaLimits;
}

/**
 * A member needs 2 transports (send + recv) and a producer per kind; the spare transports
 * cover two reconnects that make their new media before the old is released: a replaced
 * socket whose release is on its way, and one on a dead node, released by the orphan sweep
 * (./orphan-media.ts) once that node's beat has lapsed. Consumers: one per
 * producer of the others, far above a full meeting's (7 others × audio + video = 14).
 */
export const DEFAULT_MEDIA_CAPS: MediaCaps = {
  perUser: { transports: 6, producers: 4, consumers: 64 },
  perSocket: { transports: 8, producers: 8, consumers: 128 },
};

const NAMES: Readonly<Record<MediaSlot, string>> = {
  transports: 'transport',
  producers: 'producer',
  consumers: 'consumer',
};

/** What one socket made in one room (ids by slot), while still recorded. */
interface SocketRoom {
  readonly key: CellKey;
  readonly userId: string;
  readonly ids: Record<MediaSlot, Set<string>>;
}

/** What a closed socket made in one room (ids by slot), to release. */
export interface SocketMedia {
  readonly key: CellKey;
  readonly userId: string;
  readonly ids: Readonly<Record<MediaSlot, ReadonlySet<string>>>;
}

/** A creation on its way; `overlapped` once a release of its user's media in its room starts. */
interface Flight {
  overlapped: boolean;
}

export class MediaAdmission {
  /** Per user (app + id): the tail of its creations on this node. */
  readonly #lanes = new Map<string, Promise<unknown>>();
  /** Per socket (gone with it): what it made, by room. */
  readonly #sockets = new WeakMap<object, Map<string, SocketRoom>>();
  /** Per (room, user): the creations on their way, and how many releases run. */
  readonly #rooms = new Map<string, { flights: Set<Flight>; releases: number }>();
  /** Sockets that closed: what they still create is undone. */
  readonly #closed = new WeakSet<object>();

  constructor(
    private readonly deps: { readonly state: RoomMediaState; readonly caps: MediaCaps },
  ) {}

  /**
   * Runs `create` (make on the media server, then record) for one more `slot` of the user in
   * the room, once the caps allow it; refuses past a cap with nothing made. When a release
   * of the user's media in the room overlapped the creation, `undo` closes and forgets what
   * was made, and the call is refused with 会议资源不存在 (what it was made on is being
   * released). Else `admitted` runs at once, in the same turn as that check (a producer's
   * announcement: no release can start between them).
   */
  async admit<T>(
    socket: object,
    key: CellKey,
    userId: string,
    slot: MediaSlot,
    steps: {
      readonly create: () => Promise<T>;
      readonly idOf: (made: T) => string;
      readonly undo: (made: T) => Promise<void>;
      readonly admitted?: (made: T) => void;
    },
  ): Promise<T> {
    return this.#serially(userLane(key.appCode, userId), async () => {
      await this.#check(socket, key, userId, slot);
      const flight = this.#depart(key, userId);
      let made: T;
      try {
        made = await steps.create();
      } finally {
        this.#land(key, userId, flight);
      }
      if (flight.overlapped || this.#closed.has(socket)) {
        await steps.undo(made);
        throw errors.MEDIA_RESOURCE_NOT_FOUND();
      }
      this.#remember(socket, key, userId, slot, steps.idOf(made));
      steps.admitted?.(made);
      return made;
    });
  }

  /**
   * Runs a release of the user's media in the room: every creation of theirs there still on
   * its way, or starting before the release ends, is undone instead of recorded.
   */
  async releasing<T>(key: CellKey, userId: string, run: () => Promise<T>): Promise<T> {
    const id = roomUser(key, userId);
    const entry = this.#rooms.get(id) ?? { flights: new Set<Flight>(), releases: 0 };
    this.#rooms.set(id, entry);
    entry.releases += 1;
    for (const flight of entry.flights) flight.overlapped = true;
    try {
      return await run();
    } finally {
      entry.releases -= 1;
      this.#tidy(id, entry);
    }
  }

  /**
   * The socket closed: `release` runs for each room it made media in, with what it made
   * there, in its user's lane (the user's next creations on this node wait for it, so a
   * reconnect's transports are counted after the old socket's are gone). Resolves when all
   * ran; rejects with the first failure.
   */
  async socketClosed(socket: object, release: (made: SocketMedia) => Promise<void>): Promise<void> {
    this.#closed.add(socket);
    const rooms = [...(this.#sockets.get(socket)?.values() ?? [])];
    this.#sockets.delete(socket);
    const results = await Promise.allSettled(
      rooms.map((room) =>
        this.#serially(userLane(room.key.appCode, room.userId), () => release(room)),
      ),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async #check(socket: object, key: CellKey, userId: string, slot: MediaSlot): Promise<void> {
    const { perUser, perSocket } = this.deps.caps;
    const held = await this.deps.state.resources(key, userId);
    if (held[slot].length >= perUser[slot]) {
      throw errors.MEDIA_USER_LIMIT(perUser[slot], NAMES[slot]);
    }
    if ((await this.#socketHolds(socket, slot, key, held)) >= perSocket[slot]) {
      throw errors.MEDIA_SOCKET_LIMIT(perSocket[slot], NAMES[slot]);
    }
  }

  /** What the socket made of `slot` that is still recorded (what is not is dropped). */
  async #socketHolds(
    socket: object,
    slot: MediaSlot,
    key: CellKey,
    held: UserMediaResources,
  ): Promise<number> {
    const rooms = this.#sockets.get(socket);
    if (!rooms) return 0;
    let count = 0;
    for (const [route, room] of [...rooms]) {
      const records =
        route === routeKey(key) ? held : await this.deps.state.resources(room.key, room.userId);
      for (const s of ['transports', 'producers', 'consumers'] as const) {
        const recorded = new Set(records[s].map((r) => r.id));
        for (const id of room.ids[s]) if (!recorded.has(id)) room.ids[s].delete(id);
      }
      count += room.ids[slot].size;
      if (Object.values(room.ids).every((ids) => ids.size === 0)) rooms.delete(route);
    }
    return count;
  }

  #remember(socket: object, key: CellKey, userId: string, slot: MediaSlot, id: string): void {
    let rooms = this.#sockets.get(socket);
    if (!rooms) {
      rooms = new Map();
      this.#sockets.set(socket, rooms);
    }
    const route = routeKey(key);
    let room = rooms.get(route);
    if (!room) {
      room = {
        key,
        userId,
        ids: { transports: new Set(), producers: new Set(), consumers: new Set() },
      };
      rooms.set(route, room);
    }
    room.ids[slot].add(id);
  }

  #depart(key: CellKey, userId: string): Flight {
    const id = roomUser(key, userId);
    const entry = this.#rooms.get(id) ?? { flights: new Set<Flight>(), releases: 0 };
    this.#rooms.set(id, entry);
    // Made while a release runs: it may have read the records already.
    const flight = { overlapped: entry.releases > 0 };
    entry.flights.add(flight);
    return flight;
  }

  #land(key: CellKey, userId: string, flight: Flight): void {
    const id = roomUser(key, userId);
    const entry = this.#rooms.get(id);
    if (!entry) return;
    entry.flights.delete(flight);
    this.#tidy(id, entry);
  }

  #tidy(id: string, entry: { flights: Set<Flight>; releases: number }): void {
    if (entry.flights.size === 0 && entry.releases === 0) this.#rooms.delete(id);
  }

  /** Runs `work` after the user's earlier creations on this node settled. */
  #serially<T>(lane: string, work: () => Promise<T>): Promise<T> {
    const before = this.#lanes.get(lane) ?? Promise.resolve();
    const run = before.then(work);
    const tail = run.catch(() => undefined);
    this.#lanes.set(lane, tail);
    void tail.then(() => {
      if (this.#lanes.get(lane) === tail) this.#lanes.delete(lane);
    });
    return run;
  }
}

const userLane = (appCode: string, userId: string) => `${appCode}\u0000${userId}`;
const roomUser = (key: CellKey, userId: string) => `${routeKey(key)}\u0000${userId}`;
