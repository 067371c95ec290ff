/**
 * The media side of a node (./node.ts): an embedded media server or a client of a separate
 * one, or none, and what `/healthz` says about it; then the rooms' media wired on top of it.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { MeetingActiveSpeaker } from '../meeting/signalling/active-speaker.js';
import { HttpMediaOrchestrator } from '../adapters/media/http-media-orchestrator.js';
import { startMediaServer, type MediaServer } from '../media-server/server.js';
import type { Config } from './config.js';
import {
  embeddedRegistration,
  ownMediaServerId,
  sweepOrphanMedia,
  wireMediaFailover,
  wireMediaHolders,
} from './media-cluster.js';
import { embeddedMediaHealth, remoteMediaHealth, type MediaHealth } from './media-health.js';
import { MemoryRoomMediaState } from '../adapters/memory/memory-meeting-media.js';
import type { RedisMediaServers } from '../adapters/redis/redis-media-servers.js';
import { RedisRoomMediaState } from '../adapters/redis/redis-meeting-media.js';
import type { SqlBackend } from '../adapters/sql/database.js';
import { sqlReactionStore } from '../adapters/sql/reaction-store.js';
import type { CellHost } from '../cell/host.js';
import type { CellKey } from '../cell/lease.js';
import { Reactor } from '../cell/reactions.js';
import type { MeetingMembership } from '../meeting/signalling/ports.js';
import { meetingMediaRules } from '../meeting/signalling/media-rules.js';
import { MediaRecords } from '../edge/room-media/media-records.js';
import { voiceMediaRules } from '../voice-room/signalling/media-rules.js';
import type { MediaServers } from '../media-cluster/media-servers.js';
import { followRouterCaches } from '../media-cluster/router-cache.js';
import { RouterLosses } from '../edge/room-media/router-losses.js';
import { systemClock } from '../shared/clock.js';
import type { Delivery } from './delivery.js';
import { followMediaEvents } from './media-events.js';
import { wireMeetingMedia, type MeetingMedia } from '../meeting/wiring/meeting-media.js';
import type { Meetings } from '../meeting/wiring/meetings.js';
import { wireVoiceMedia, type VoiceMedia } from '../voice-room/wiring/voice-media.js';
import type { VoiceRooms } from '../voice-room/wiring/voice-rooms.js';

/** The media side of a node: the orchestrator the meeting module calls, and its server. */
export interface NodeMedia {
  /** Null when the embedded media server could not start (see the warning in the log). */
  readonly orchestrator: HttpMediaOrchestrator | null;
  /** The embedded media server; null when it runs elsewhere or could not start. */
  readonly server: MediaServer | null;
  /** For `/healthz`: whether meetings have audio and video on this node. */
  readonly health: MediaHealth;
}

/**
 * Embedded (default): a media server in this process, called over loopback HTTP like a
 * remote one, so both modes share one client. A missing worker binary or a taken port must
 * not stop the rest of the node: it starts without media and says why.
 */
export async function wireMedia(
  config: Config,
  logger: Logger,
  closers: (() => Promise<unknown>)[],
): Promise<NodeMedia> {
  const { media } = config;
  const client = (baseUrl: string, internalToken: string) => {
    const orchestrator = new HttpMediaOrchestrator({
      baseUrl,
      internalToken,
      timeoutMs: media.timeoutMs,
      closeRetry: media.closeRetry,
      logger: logger.child({ module: 'media-client' }),
    });
    closers.push(() => {
      orchestrator.close();
      return Promise.resolve();
    });
    return orchestrator;
  };
  if (media.none) {
    const reason = 'no media role and no ROOMS_MEDIA_URL on this node';
    return { orchestrator: null, server: null, health: embeddedMediaHealth(null, reason) };
  }
  if (!media.embedded) {
    // config.ts requires the token when not embedded.
    return {
      orchestrator: client(media.url, media.internalToken ?? ''),
      server: null,
      health: remoteMediaHealth(media.url),
    };
  }
  const internalToken = media.internalToken ?? randomBytes(24).toString('hex');
  try {
    const server = await startMediaServer(
      { ...media.server, internalToken },
      logger,
      process.env,
      embeddedRegistration(config),
    );
    closers.push(() => server.close());
    return {
      orchestrator: client(server.url, internalToken),
      server,
      health: embeddedMediaHealth(server, ''),
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    logger.warn(`embedded media server not started, meetings have no audio/video: ${reason}`);
    return { orchestrator: null, server: null, health: embeddedMediaHealth(null, reason) };
  }
}

/** What the media side of the rooms gives the node. */
export interface RoomsMedia {
  /** The meetings' media and WebSocket signalling. */
  readonly signalling: MeetingMedia;
  /** Voice rooms' audio. */
  readonly voiceAudio: VoiceMedia;
  /** Post-commit reactions: the fast path after this node's commits, and the relay. */
  readonly reactor: Reactor;
}

/**
 * The rooms' media once delivery is wired: media state, failover, meeting and voice media,
 * post-commit reactions, media records, media events and orphan sweeps. Its closers are
 * pushed after the host's own, so they run before them.
 */
export async function wireRoomsMedia(
  deps: {
    config: Config;
    logger: Logger;
    redis: Redis | null;
    sql: SqlBackend;
    host: CellHost;
    media: NodeMedia;
    mediaServers: MediaServers;
    directory: RedisMediaServers | null;
    meetings: Meetings;
    voice: VoiceRooms;
    membership: MeetingMembership;
    delivery: Delivery;
    /** Hears the Reactor as soon as it exists, before it starts (the host's `onCommitted`). */
    onReactor: (reactor: Reactor) => void;
  },
  closers: (() => Promise<unknown>)[],
): Promise<RoomsMedia> {
  const { config, logger, redis, sql, host, media, mediaServers, directory } = deps;
  const { meetings, voice, membership, delivery: wired } = deps;
  // What users hold on the media server, for both room kinds (Redis in a cluster).
  const holders = await wireMediaHolders(config, redis, logger, closers);
  const mediaState = redis
    ? new RedisRoomMediaState({ redis, keyPrefix: config.keyPrefix, holder: holders!.self })
    : new MemoryRoomMediaState();
  const owns = (key: CellKey) => host.ownsNow(key);
  const failover = wireMediaFailover(
    directory,
    { meetings: meetings.api, voice: voice.api },
    logger,
    closers,
  );
  const meetingMedia = wireMeetingMedia({
    failover,
    holders,
    hub: wired.hub,
    publisher: wired.publisher,
    meetings,
    media: mediaServers,
    state: mediaState,
    logger,
    nodeId: config.nodeId,
    presenceTtlMs: config.meeting.presenceTtlMs,
    caps: config.media.caps,
    turn: config.media.turn,
    plainRtp: config.media.plainRtp,
  });
  const signalling = meetingMedia;
  const voiceAudio = wireVoiceMedia({
    config,
    failover,
    holders,
    hub: wired.hub,
    publisher: wired.publisher,
    api: voice.api,
    media: mediaServers,
    nodeMedia: media,
    state: mediaState,
    owns,
    logger,
  });
  // What commits make happen on the media servers: at once here when this node owns the
  // room, else (a death after COMMIT, a failure) by any node with media, until done.
  const reactor = new Reactor(
    {},
    {
      store: sqlReactionStore(sql.db),
      clock: systemClock,
      logger,
      handlers: new Map([...meetingMedia.reactions, ...voiceAudio.reactions]),
    },
  );
  deps.onReactor(reactor);
  reactor.start();
  const records = new MediaRecords({
    state: mediaState,
    rules: {
      meeting: meetingMediaRules(membership, mediaState),
      voice_room: voiceMediaRules(voice.api, ownMediaServerId(config, media)),
    },
    broadcaster: wired.publisher,
    owns,
    logger,
  });
  const routerCaches = followRouterCaches(mediaServers);
  const routerLosses = new RouterLosses({
    state: mediaState,
    media: mediaServers,
    broadcaster: wired.publisher,
    release: {
      meeting: (key, userId, server) =>
        meetingMedia.signalling.releaseUserMedia(key, userId, server),
      voice_room: (key, userId, server) => voiceAudio.signalling.releaseOn(key, userId, server),
    },
    owns,
    logger,
  });
  // The meetings' speaker view (../meeting/signalling/active-speaker.ts).
  const activeSpeaker = new MeetingActiveSpeaker({ owns, broadcaster: wired.publisher });
  const stopMediaEvents = followMediaEvents(
    config,
    media,
    logger,
    // The caches first: a lost router's recovery must not be answered from them.
    [
      routerCaches.onEvent,
      voiceAudio.bridge.onEvent,
      activeSpeaker.onEvent,
      records.onEvent,
      routerLosses.onEvent,
    ],
    directory,
    routerCaches.onGap,
  );
  sweepOrphanMedia(config, holders, { meeting: signalling, voice: voiceAudio }, logger, closers);
  // Closed after the sockets (closers run in reverse): their disconnects release media first.
  closers.push(() => signalling.close());
  closers.push(() => voiceAudio.close());
  closers.push(() => records.close());
  closers.push(() => routerLosses.close());
  closers.push(() => reactor.stop());
  closers.push(() => Promise.resolve(stopMediaEvents()));
  return { signalling, voiceAudio, reactor };
}
