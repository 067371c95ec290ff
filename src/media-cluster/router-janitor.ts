/**
 * Closes the routers of ended rooms that are still open on the media server. A meeting's
 * end and a voice room's close close the router right after the commit, on the owner; when
 * that node dies in between, or every retry of the close fails, the router (and whatever
 * transports are still on it) would stay until the media server restarts. So every node
 * sweeps its media servers every `intervalMs`: each room that has ended (a meeting with
 * `status = 2`, a voice room `closed`) loses its router. Closing a router twice is success,
 * so nodes sweeping at once only overlap. Live rooms and names this module did not make
 * are left alone.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../cell/lease.js';
import { SweepJob } from '../shared/periodic-sweep.js';
import {
  mediaRoomOf,
  parseMediaRoom,
  type MediaRoomKind,
  type MediaServers,
} from './media-servers.js';

/** A room with media, by kind. */
export interface MediaRoom {
  readonly kind: MediaRoomKind;
  readonly key: CellKey;
}

/** Port: which of these rooms have ended (SQL adapter: src/adapters/sql/ended-rooms.ts). */
export interface EndedRooms {
  endedAmong(rooms: readonly MediaRoom[]): Promise<MediaRoom[]>;
}

export class MediaRouterJanitor extends SweepJob {
  constructor(
    config: { readonly intervalMs?: number },
    private readonly deps: {
      readonly media: MediaServers;
      readonly rooms: EndedRooms;
      readonly logger: Logger;
    },
  ) {
    super({
      intervalMs: config.intervalMs ?? 60_000,
      logger: deps.logger.child({ module: 'media-router-janitor' }),
      what: 'closing the routers of ended rooms',
    });
  }

  /** One sweep now; resolves with how many routers it closed. */
  override async sweepOnce(): Promise<number> {
    let closed = 0;
    for (const serverId of this.deps.media.ids()) {
      const media = this.deps.media.of(serverId);
      const rooms = (await media.listRooms())
        .map(parseMediaRoom)
        .filter((room): room is MediaRoom => room !== null);
      for (let i = 0; i < rooms.length && !this.loop.isStopped; i += CHUNK) {
        for (const room of await this.deps.rooms.endedAmong(rooms.slice(i, i + CHUNK))) {
          await media.closeRouter(mediaRoomOf(room.key, room.kind));
          closed += 1;
        }
      }
    }
    if (closed > 0) this.logger.info({ closed }, 'closed the routers of ended rooms');
    return closed;
  }
}

/** Rooms asked about per query. */
const CHUNK = 200;
