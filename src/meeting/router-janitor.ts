/**
 * Closes the routers of ended meetings that are still open on the media server. An end
 * closes the meeting's router right after its commit, on the owner; when that node dies in
 * between, or every retry of the close fails, the router (and whatever transports are
 * still on it) would stay until the media server restarts. So every node sweeps its media
 * servers every `intervalMs`: each room whose meeting has ended (`status = 2`) loses its
 * router. Closing a router twice is success, so nodes sweeping at once only overlap. Rooms
 * that are no ended meeting (live meetings, rooms of other kinds, names this module did not
 * make) are left alone.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../cell/lease.js';
import { PeriodicSweep } from '../shared/periodic-sweep.js';
import { mediaRoomOf, parseMediaRoom, type MediaServers } from './media-servers.js';

/** Port: which of these meetings have ended (SQL adapter: src/adapters/sql/meeting/). */
export interface EndedMeetings {
  endedAmong(meetings: readonly CellKey[]): Promise<CellKey[]>;
}

/** A media room name back to its meeting's key; null for another kind's or name. */
export function meetingOfMediaRoom(name: string): CellKey | null {
  const room = parseMediaRoom(name);
  return room?.kind === 'meeting' ? room.key : null;
}

export class MediaRouterJanitor {
  private readonly logger: Logger;
  private readonly loop: PeriodicSweep;

  constructor(
    config: { readonly intervalMs?: number },
    private readonly deps: {
      readonly media: MediaServers;
      readonly meetings: EndedMeetings;
      readonly logger: Logger;
    },
  ) {
    this.logger = deps.logger.child({ module: 'media-router-janitor' });
    this.loop = new PeriodicSweep({
      intervalMs: config.intervalMs ?? 60_000,
      run: () => this.sweepOnce(),
      logger: this.logger,
      what: 'closing the routers of ended meetings',
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One sweep now; resolves with how many routers it closed. */
  async sweepOnce(): Promise<number> {
    let closed = 0;
    for (const serverId of this.deps.media.ids()) {
      const media = this.deps.media.of(serverId);
      const meetings = (await media.listRooms())
        .map(meetingOfMediaRoom)
        .filter((key): key is CellKey => key !== null);
      for (let i = 0; i < meetings.length && !this.loop.isStopped; i += CHUNK) {
        for (const key of await this.deps.meetings.endedAmong(meetings.slice(i, i + CHUNK))) {
          await media.closeRouter(mediaRoomOf(key));
          closed += 1;
        }
      }
    }
    if (closed > 0) this.logger.info({ closed }, 'closed the routers of ended meetings');
    return closed;
  }
}

/** Meetings asked about per query. */
const CHUNK = 200;
