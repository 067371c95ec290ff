/**
 * Wires the meetings' live side into a node: the WebSocket signalling (media resources in
 * Redis with a cluster, in memory otherwise), and what a meeting's commits make happen on
 * the media server: a member who stopped being active loses its transports, producers and
 * consumers; an ended meeting's router is closed; a meeting moved off a dead media server
 * gets its router on the new one and its members `meeting.media.reset`
 * (../edge/room-media/media-reset.ts). Without a media server the signalling
 * still follows meetings and answers every media event with 会议媒体服务暂不可用.
 */
import type { Logger } from 'pino';
import type { CommittedBatch } from '../cell/cell.js';
import type { MeetingEvent } from '../domain/meeting/types.js';
import { meetingMembership } from '../edge/meeting/membership.js';
import { MeetingSignalling } from '../edge/meeting-ws/signalling.js';
import type { MediaHolders, RoomMediaState } from '../edge/room-media/ports.js';
import type { MediaCaps } from '../edge/room-media/media-admission.js';
import { resetRoomMedia } from '../edge/room-media/media-reset.js';
import type { WsHub } from '../edge/ws/hub.js';
import type { MediaFailover } from '../meeting/media-failover.js';
import { mediaRoomOf, type MediaServers } from '../meeting/media-servers.js';
import type { RealtimePublisher } from '../realtime/publisher.js';
import type { Meetings } from './meetings.js';

export interface MeetingMedia {
  readonly signalling: MeetingSignalling;
  /** The host's commit listener for meeting cells. */
  onCommitted(batch: CommittedBatch): void;
  close(): Promise<void>;
}

export function wireMeetingMedia(deps: {
  hub: WsHub;
  publisher: RealtimePublisher;
  meetings: Meetings;
  /** Each meeting's media server, by the id its state records. */
  media: MediaServers;
  /** The media resources users hold (shared with the voice rooms' signalling). */
  state: RoomMediaState;
  logger: Logger;
  /** This node's id: the key of its presence leases in the meetings. */
  nodeId: string;
  /** The meetings' presence TTL; the signalling refreshes every third of it. */
  presenceTtlMs: number;
  /** Moves meetings off lost media servers (null: a node without a media directory). */
  failover: MediaFailover | null;
  /** Which node process holds what (null: no cluster). */
  holders: MediaHolders | null;
  /** How much media a user may hold in a meeting, and a socket (`ROOMS_MEDIA_*_MAX_*`). */
  caps?: MediaCaps;
}): MeetingMedia {
  const logger = deps.logger.child({ module: 'meeting-media' });
  const { media, failover } = deps;
  const signalling = new MeetingSignalling({
    hub: deps.hub,
    membership: meetingMembership(deps.meetings.api, deps.meetings.limits),
    media,
    state: deps.state,
    broadcaster: deps.publisher,
    logger,
    nodeId: deps.nodeId,
    liveRefreshMs: Math.floor(deps.presenceTtlMs / 3),
    ...(failover ? { rescue: (key, from) => failover.rescue('meeting', key, from) } : {}),
    ...(deps.holders ? { holders: deps.holders } : {}),
    ...(deps.caps ? { caps: deps.caps } : {}),
  });
  const quietly = (what: string, run: () => Promise<void>) => {
    run().catch((err: unknown) => logger.warn({ err }, `${what} failed`));
  };
  return {
    signalling,
    onCommitted(batch) {
      if (batch.kind !== 'meeting') return;
      for (const entry of batch.entries) {
        for (const event of entry.events as readonly MeetingEvent[]) {
          if (event.type === 'MemberLeft') {
            quietly('releasing a member’s media', () =>
              signalling.releaseUserMedia(batch.key, event.user_id, event.media_server ?? null),
            );
          } else if (event.type === 'MeetingEnded' && event.media_server) {
            const server = media.of(event.media_server);
            quietly('closing the router', () => server.closeRouter(mediaRoomOf(batch.key)));
          } else if (event.type === 'MediaServerMoved') {
            const reset = { state: deps.state, media, broadcaster: deps.publisher, logger };
            quietly('moving the meeting’s media', () =>
              resetRoomMedia(reset, 'meeting', batch.key, event),
            );
          }
        }
      }
    },
    close: () => signalling.close(),
  };
}
