/**
 * Wires the meetings' live side into a node: the WebSocket signalling (media resources in
 * Redis with a cluster, in memory otherwise), and what a meeting's commits make happen on
 * the media server: a member who stopped being active loses its transports, producers and
 * consumers; an ended meeting's router is closed. Without a media server the signalling
 * still follows meetings and answers every media event with 会议媒体服务暂不可用.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { MemoryMeetingMediaState } from '../adapters/memory/memory-meeting-media.js';
import { RedisMeetingMediaState } from '../adapters/redis/redis-meeting-media.js';
import type { CommittedBatch } from '../cell/cell.js';
import type { MeetingEvent } from '../domain/meeting/types.js';
import { meetingMembership } from '../edge/meeting/membership.js';
import { MeetingSignalling } from '../edge/meeting-ws/signalling.js';
import type { WsHub } from '../edge/ws/hub.js';
import type { MediaOrchestrator } from '../meeting/media-orchestrator.js';
import type { RealtimePublisher } from '../realtime/publisher.js';
import { errors } from '../shared/error-codes.js';
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
  orchestrator: MediaOrchestrator | null;
  redis: Redis | null;
  keyPrefix: string;
  logger: Logger;
  /** This node's id: the key of its presence leases in the meetings. */
  nodeId: string;
  /** The meetings' presence TTL; the signalling refreshes every third of it. */
  presenceTtlMs: number;
}): MeetingMedia {
  const logger = deps.logger.child({ module: 'meeting-media' });
  const media = deps.orchestrator ?? noMediaServer();
  const signalling = new MeetingSignalling({
    hub: deps.hub,
    membership: meetingMembership(deps.meetings.api),
    media,
    state: deps.redis
      ? new RedisMeetingMediaState({ redis: deps.redis, keyPrefix: deps.keyPrefix })
      : new MemoryMeetingMediaState(),
    broadcaster: deps.publisher,
    logger,
    nodeId: deps.nodeId,
    liveRefreshMs: Math.floor(deps.presenceTtlMs / 3),
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
              signalling.releaseUserMedia(batch.key, event.user_id),
            );
          } else if (event.type === 'MeetingEnded' && deps.orchestrator) {
            quietly('closing the router', () => media.closeRouter(batch.key.roomId));
          }
        }
      }
    },
    close: () => signalling.close(),
  };
}

/** The orchestrator of a node without a media server: every call is 会议媒体服务暂不可用. */
function noMediaServer(): MediaOrchestrator {
  const refuse = () =>
    Promise.reject(errors.MEDIA_SERVER_ERROR.withCause(new Error('no media server on this node')));
  return {
    createRouter: refuse,
    closeRouter: () => Promise.resolve(),
    createTransport: refuse,
    connectTransport: refuse,
    createProducer: refuse,
    createConsumer: refuse,
    resumeConsumer: refuse,
    closeTransport: () => Promise.resolve(),
    closeProducer: () => Promise.resolve(),
    closeConsumer: () => Promise.resolve(),
    resolveRouterInfo: () => ({ ok: false, routerId: '', rtpCapabilities: null }),
  };
}
