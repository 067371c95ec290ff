/**
 * Wires the meetings' live side into a node: the WebSocket signalling (media resources in
 * Redis with a cluster, in memory otherwise), and what a meeting's commits make happen on
 * the media server: a member who stopped being active loses its transports, producers and
 * consumers; an ended meeting's router is closed; a meeting moved off a dead media server
 * gets its router on the new one and its members `meeting.media.reset`
 * (../../edge/room-media/media-reset.ts). Without a media server the signalling
 * still follows meetings and answers every media event with 会议媒体服务暂不可用.
 */
import type { Logger } from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { ReactionHandler } from '../../cell/reactions.js';
import type { MeetingMembership } from '../signalling/ports.js';
import { meetingMembership } from '../api/membership.js';
import { MeetingSignalling } from '../signalling/signalling.js';
import type { MediaHolders, RoomMediaState } from '../../edge/room-media/ports.js';
import type { MediaCaps } from '../../edge/room-media/media-admission.js';
import type { TurnSettings } from '../../edge/room-media/ice-servers.js';
import { resetRoomMedia } from '../../edge/room-media/media-reset.js';
import type { WsHub } from '../../edge/ws/hub.js';
import { FAILOVER_CALLER, type MediaFailover } from '../../media-cluster/media-failover.js';
import { isMediaResourceNotFound } from '../../media-cluster/media-orchestrator.js';
import { mediaRoomOf, type MediaServers } from '../../media-cluster/media-servers.js';
import type { MeetingApi } from '../api/meeting-api.js';
import type { RealtimePublisher } from '../../realtime/publisher.js';
import { AppError } from '../../shared/errors.js';
import type { Meetings } from './meetings.js';

export interface MeetingMedia {
  readonly signalling: MeetingSignalling;
  /** What a meeting's commits make happen on its media server (../../cell/reactions.ts). */
  readonly reactions: ReadonlyMap<string, ReactionHandler>;
  close(): Promise<void>;
}

/** Whether the user is an active member of the meeting again (a refusal says no). */
async function activeAgain(
  members: MeetingMembership,
  key: CellKey,
  userId: string,
): Promise<boolean> {
  try {
    await members.member(key.appCode, key.roomId, userId);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.kind !== 'unavailable' && error.kind !== 'internal') {
      return false;
    }
    throw error;
  }
}

/**
 * The meeting's media server, whose audio is held now and which recording runs; undefined
 * for a meeting ended or gone (its router closes with it).
 */
async function mediaStateOf(api: MeetingApi, key: CellKey) {
  try {
    return await api.call('MeetingMediaState', {
      app_code: key.appCode,
      room_code: key.roomId,
      caller_id: FAILOVER_CALLER,
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'MEETING_NOT_FOUND' || code === 'MEETING_ENDED') return undefined;
    throw error;
  }
}

/** The meeting's media server; undefined for a meeting ended or gone. */
async function mediaServerOf(api: MeetingApi, key: CellKey): Promise<string | null | undefined> {
  return (await mediaStateOf(api, key))?.media_server;
}

/**
 * Pauses the audio producers of the members whose audio is held (muted while the host keeps
 * them from unmuting themselves) and resumes the others' (only `userId`'s when given). Read
 * from the media server, so a producer made meanwhile is either seen here or refused by its
 * own check after it was recorded (../../edge/room-media/keep-made.ts).
 */
async function holdAudio(
  media: MediaServers,
  api: MeetingApi,
  key: CellKey,
  userId: string | null,
): Promise<void> {
  const holds = await mediaStateOf(api, key);
  if (holds === undefined) return; // ended or gone: its router closes with it
  const server = media.of(holds.media_server);
  let producers;
  try {
    producers = await server.listProducers(mediaRoomOf(key));
  } catch (error) {
    if (isMediaResourceNotFound(error)) return; // no router: nothing to hold
    throw error;
  }
  const held = new Set(holds.held_user_ids);
  for (const p of producers) {
    // The microphone only: a shared screen's sound is not the member's voice.
    if (p.kind !== 'audio' || p.peerId === null || p.appData.source === 'screen_audio') continue;
    if (userId !== null && p.peerId !== userId) continue;
    const pause = held.has(p.peerId);
    if (pause !== p.paused) await server.setProducerPaused(p.producerId, pause);
  }
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
  /** TURN servers handed to every transport (`ROOMS_TURN_*`). */
  turn: TurnSettings | null;
  plainRtp: boolean;
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
    turn: deps.turn,
    plainRtp: deps.plainRtp,
  });
  // Asked without the lookup limits: a reaction is the server's question, not the user's.
  const members = meetingMembership(deps.meetings.api);
  const reset = { state: deps.state, media, broadcaster: deps.publisher, logger };
  const text = (data: Readonly<Record<string, unknown>>, name: string) =>
    typeof data[name] === 'string' ? data[name] : null;
  const reactions = new Map<string, ReactionHandler>([
    [
      'meeting.member_media.release',
      async (key, data) => {
        const userId = text(data, 'user_id')!;
        // Carried out late (its owner died, the media server was away) after the member
        // came back: what they hold now is their new session's, not the one that ended.
        if (await activeAgain(members, key, userId)) return;
        await signalling.releaseUserMedia(key, userId, text(data, 'media_server'));
      },
    ],
    [
      'meeting.audio.reconcile',
      (key, data) => holdAudio(media, deps.meetings.api, key, text(data, 'user_id')),
    ],
    [
      'meeting.recording.start',
      async (key, data) => {
        const id = text(data, 'recording_id')!;
        // Run late (retried) after its stop: a recording that no longer runs is not begun.
        if ((await mediaStateOf(deps.meetings.api, key))?.recording_id !== id) return;
        await media.of(text(data, 'media_server')).startRecording(mediaRoomOf(key), id);
      },
    ],
    [
      'meeting.recording.stop',
      async (_key, data) => {
        try {
          await media.of(text(data, 'media_server')).stopRecording(text(data, 'recording_id')!);
        } catch (error) {
          if (!isMediaResourceNotFound(error)) throw error; // never begun: nothing to stop
        }
      },
    ],
    [
      'meeting.screen.close',
      async (key, data) => {
        const where = await mediaServerOf(deps.meetings.api, key);
        if (where !== undefined) await signalling.closeScreenOf(key, text(data, 'user_id')!, where);
      },
    ],
    [
      'meeting.router.close',
      (key, data) => media.of(text(data, 'media_server')).closeRouter(mediaRoomOf(key)),
    ],
    [
      'meeting.media.reset',
      (key, data) =>
        resetRoomMedia(reset, 'meeting', key, {
          to_server: text(data, 'to_server')!,
          user_ids: data.user_ids as readonly string[],
        }),
    ],
  ]);
  return {
    signalling,
    reactions,
    close: () => signalling.close(),
  };
}
