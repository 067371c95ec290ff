/**
 * Moves the rooms of a dead media server. When a registered server's directory record
 * expired (it was killed, or stopped with rooms left), every node that notices reads the
 * rooms it last reported and sends each room's cell one `MoveMediaServer` command to the
 * server it would place a new room on. The callers' request id names the dead server and its
 * boot; the room's owner makes the cell's request id of it, the move (from, to) and how many
 * moves the room already made ({@link moveRequestId}): the same for every node that sends
 * this move and for its retries, so the room moves once (the first commit wins; the others
 * get its outcome, or find the room no longer on the dead server), and another for every
 * later move, even back and forth between the same servers of the same boots. Once every
 * room moved, the dead server leaves the directory.
 *
 * A room the dead server never listed (its router was made after its last beat, or a voice
 * room recorded there never made one) is moved when it is next used: a media call or join
 * that fails on a server the directory has lost calls {@link MediaFailover.rescue}, which
 * sends the same command under the same request id. What the commit makes happen (the members told to re-create their media, the
 * records of the dead server's resources forgotten) is the commit listeners' business
 * (src/meeting/wiring/meeting-media.ts, src/voice-room/wiring/voice-media.ts).
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { CellKey } from '../cell/lease.js';
import { parseMediaRoom, type MediaRoomKind } from './media-servers.js';

/**
 * Moves one room's router off `from` to `to`, once per request id; resolves with the server
 * the room records after the command (the first move's, when another node's won).
 */
export type RoomMover = (
  key: CellKey,
  from: string,
  to: string,
  requestId: string,
) => Promise<string | null>;

export interface MediaFailoverDeps {
  /** The rooms the dead server last reported, and the boot they belong to. */
  readonly roomsOf: (serverId: string) => Promise<{ boot: string; rooms: string[] }>;
  /** Every room moved: the server leaves the directory. */
  readonly forgetDead: (serverId: string) => Promise<void>;
  /** The boot of a server gone from the directory; null: live, or never registered. */
  readonly lostBoot: (serverId: string) => Promise<string | null>;
  /** Where a room goes (null: no live server; tried again at the next notice). */
  readonly place: () => string | null;
  readonly movers: Readonly<Partial<Record<MediaRoomKind, RoomMover>>>;
  readonly logger: Logger;
}

/**
 * The request id of a room's move off `serverId` in its `boot` (the same on every node; a
 * digest, so it fits every API's request id whatever the id's length).
 */
export function failoverRequestId(serverId: string, boot: string): string {
  const digest = createHash('sha256').update(`${serverId}\n${boot}`).digest('base64url');
  return `media-failover:${digest.slice(0, 32)}`;
}

/**
 * The cell's request id of one move of a room: the caller's request id, the move, and how
 * many moves the room's state records before it. Retries of this move (and the same notice
 * on other nodes) get the same id; the room's next move, whatever its servers, another.
 */
export function moveRequestId(
  requestId: string,
  move: { readonly from: string; readonly to: string; readonly moves: number },
): string {
  const named = `${requestId}\n${move.from}\n${move.to}\n${move.moves}`;
  const digest = createHash('sha256').update(named).digest('base64url');
  return `media-move:${digest.slice(0, 32)}`;
}

/** The caller id the moves are made under (part of their request ids in the cells). */
export const FAILOVER_CALLER = 'media-failover';

/**
 * Moves a room recorded on `from` if the directory lost that server: `move` sends the room's
 * `MoveMediaServer` (to where a new room would go, under the request id the failover uses)
 * and answers the server the room records after it. Null when `from` is not lost (a live
 * server's failure is transient) or no live server can take the room.
 */
export async function moveOffLostServer(
  directory: {
    lostBoot(serverId: string): Promise<string | null>;
    place(): string | null;
  },
  from: string,
  move: (to: string, requestId: string) => Promise<string | null>,
): Promise<string | null> {
  const boot = await directory.lostBoot(from);
  if (boot === null) return null;
  const to = directory.place();
  if (to === null) return null;
  return move(to, failoverRequestId(from, boot));
}

export class MediaFailover {
  readonly #running = new Map<string, Promise<void>>();
  readonly #logger: Logger;
  #closed = false;

  constructor(private readonly deps: MediaFailoverDeps) {
    this.#logger = deps.logger.child({ module: 'media-failover' });
  }

  /** The directory saw `serverId` dead: move its rooms (one run per server at a time). */
  readonly onDead = (serverId: string): void => {
    if (this.#closed || this.#running.has(serverId)) return;
    const run = this.moveRoomsOf(serverId)
      .then(() => undefined)
      .catch((err: unknown) => this.#logger.warn({ err, serverId }, 'moving rooms failed'))
      .finally(() => this.#running.delete(serverId));
    this.#running.set(serverId, run);
  };

  /** Moves every room of a dead server; resolves with how many it sent and how many failed. */
  async moveRoomsOf(serverId: string): Promise<{ moved: number; failed: number }> {
    const { boot, rooms } = await this.deps.roomsOf(serverId);
    const requestId = failoverRequestId(serverId, boot);
    let moved = 0;
    let failed = 0;
    for (const name of rooms) {
      const room = parseMediaRoom(name);
      const mover = room && this.deps.movers[room.kind];
      if (!room || !mover) continue;
      const to = this.deps.place();
      if (to === null) {
        failed += 1;
        continue;
      }
      try {
        await mover(room.key, serverId, to, requestId);
        moved += 1;
      } catch (err) {
        failed += 1;
        this.#logger.warn({ err, room: room.key, serverId, to }, 'moving a room failed');
      }
    }
    if (failed === 0) await this.deps.forgetDead(serverId);
    if (rooms.length > 0) {
      this.#logger.info(
        { serverId, rooms: rooms.length, moved, failed },
        'media server rooms moved',
      );
    }
    return { moved, failed };
  }

  /**
   * A call for a room on `serverId` failed: if the directory has lost that server, the room
   * moves (as the failover would have moved it had it been listed). Resolves with the server
   * the room records now; null when `serverId` is not lost (the failure was transient) or no
   * live server can take the room.
   */
  async rescue(kind: MediaRoomKind, key: CellKey, serverId: string): Promise<string | null> {
    const mover = this.deps.movers[kind];
    if (this.#closed || !mover) return null;
    const now = await moveOffLostServer(this.deps, serverId, (to, requestId) =>
      mover(key, serverId, to, requestId),
    );
    if (now !== null) {
      this.#logger.info(
        { room: key, kind, serverId, to: now },
        'unlisted room moved off a lost server',
      );
    }
    return now;
  }

  /** Stops taking notices and waits for the runs in flight. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#running.values()]);
  }
}
