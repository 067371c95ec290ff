/**
 * A media server lost routers with a worker (`routers_lost`; the server itself lives on).
 * The room's owner (one node, so nothing is told twice) makes the members on them start
 * their media again:
 * - an **edge** router carried listeners only: each of its peers' media in the room is
 *   released (what they still hold on the origin, e.g. a seat's producer, closes and is
 *   announced closed) and each of them alone gets the kind's reset frame (`voice.media.reset`,
 *   `meeting.media.reset`) naming the room's router; the room's other members hear nothing
 *   and keep receiving;
 * - the **origin** took the room's producers and its edges with it: every member gets the
 *   reset frame, as when the room moves off a dead server (./media-reset.ts), with the
 *   router made again on the same server.
 * An edge lost with another media server (`media_server`) is reported by the room's own
 * server, as any lost edge. The server that held it, if alive, reports it too, marked with
 * `origin_server`: that copy is skipped, so the listeners are reset once.
 * A lost peer whose client never resets still loses nothing more: its transports died with
 * the worker and their records are forgotten by ./media-records.ts.
 */
import type { CellKey } from '../../cell/lease.js';
import type { LostRouter, MediaEvent } from '../../media-server/events.js';
import {
  mediaRoomOf,
  parseMediaRoom,
  type MediaRoomKind,
} from '../../media-cluster/media-servers.js';
import { InFlight } from '../../shared/in-flight.js';
import type { RoomBroadcaster } from './media-call.js';
import { MEDIA_RESET_FRAMES, resetRoomMedia, type MediaResetDeps } from './media-reset.js';

/** Releases everything a user holds in a room, on the given media server. */
export type UserMediaRelease = (key: CellKey, userId: string, server: string) => Promise<void>;

export interface RouterLossDeps extends MediaResetDeps {
  readonly broadcaster: RoomBroadcaster & {
    toUser(appCode: string, userId: string, event: string, data: Record<string, unknown>): void;
  };
  readonly release: Readonly<Partial<Record<MediaRoomKind, UserMediaRelease>>>;
  /** Whether this node owns the room now. */
  readonly owns: (key: CellKey) => boolean;
}

export class RouterLosses {
  private readonly inFlight = new InFlight();

  constructor(private readonly deps: RouterLossDeps) {}

  /** The media event listener (never throws). */
  readonly onEvent = (event: MediaEvent, serverId: string): void => {
    if (event.type !== 'routers_lost') return;
    for (const lost of event.routers) {
      // An edge held for another server's room: that server reports it, for its room.
      if (lost.origin_server) continue;
      const room = parseMediaRoom(lost.room_code);
      if (!room || !this.deps.release[room.kind] || !this.deps.owns(room.key)) continue;
      this.inFlight.track(this.recover(room.kind, room.key, serverId, lost), (err: unknown) =>
        this.deps.logger.warn({ err, room: room.key, lost }, 'recovering a lost router failed'),
      );
    }
  };

  /** Waits for the work in flight. */
  close(): Promise<void> {
    return this.inFlight.drain();
  }

  private async recover(
    kind: MediaRoomKind,
    key: CellKey,
    serverId: string,
    lost: LostRouter,
  ): Promise<void> {
    const { deps } = this;
    if (lost.role === 'origin') {
      await resetRoomMedia(deps, kind, key, { to_server: serverId, user_ids: lost.peers });
      return;
    }
    const release = deps.release[kind]!;
    const router = await deps.media.of(serverId).createRouter(mediaRoomOf(key, kind));
    const { event, roomField } = MEDIA_RESET_FRAMES[kind];
    const data = {
      [roomField]: key.roomId,
      media_server: serverId,
      router_id: router.routerId,
      rtp_capabilities: router.rtpCapabilities,
    };
    await Promise.all(
      lost.peers.map(async (userId) => {
        await release(key, userId, serverId);
        deps.broadcaster.toUser(key.appCode, userId, event, data);
      }),
    );
    deps.logger.info(
      { room: key, listeners: lost.peers.length },
      'edge router lost; its listeners reset',
    );
  }
}
