/**
 * Several media servers in a cluster: the directory a node places rooms with and reaches
 * each room's server through (Redis: src/adapters/redis/redis-media-servers.ts; without
 * Redis, the node's one server), the embedded server's own registration settings, and the
 * failover that moves a dead server's rooms (src/media-cluster/media-failover.ts).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { HttpMediaOrchestrator } from '../adapters/media/http-media-orchestrator.js';
import { RedisMediaHolders } from '../adapters/redis/media-holders.js';
import { RedisMediaServers } from '../adapters/redis/redis-media-servers.js';
import { OrphanMediaSweep } from '../edge/room-media/orphan-media.js';
import type { MediaRegistrationSettings } from '../media-server/registration.js';
import { FAILOVER_CALLER, MediaFailover, type RoomMover } from '../media-cluster/media-failover.js';
import type { MediaRoomKind } from '../media-cluster/media-servers.js';
import { singleMediaServer, type MediaServers } from '../media-cluster/media-servers.js';
import type { MeetingApi } from '../meeting/api/meeting-api.js';
import type { VoiceRoomApi } from '../voice-room/api/voice-api.js';
import type { Config } from './config.js';
import type { MeetingMedia } from '../meeting/wiring/meeting-media.js';
import type { NodeMedia } from './node-media.js';
import type { VoiceMedia } from '../voice-room/wiring/voice-media.js';

type Closers = (() => Promise<unknown>)[];

/** The id of this node's own media server; null when it has none. */
export function ownMediaServerId(config: Config, media: NodeMedia): string | null {
  return media.orchestrator ? config.media.serverId : null;
}

/**
 * The embedded server registers when the node has Redis and the cluster's shared
 * `ROOMS_MEDIA_INTERNAL_TOKEN` (other nodes must be able to call it); else it stays the
 * node's own, as before.
 */
export function embeddedRegistration(config: Config): MediaRegistrationSettings | null {
  if (!config.redisUrl || !config.media.internalToken) return null;
  return {
    id: config.media.serverId,
    redisUrl: config.redisUrl,
    keyPrefix: config.keyPrefix,
    advertiseUrl: config.media.advertiseUrl,
    ttlMs: config.media.registrationTtlMs,
  };
}

/** The node's media directory; `directory` is the Redis one when the node has Redis. */
export async function wireMediaDirectory(
  config: Config,
  media: NodeMedia,
  redis: Redis | null,
  logger: Logger,
  closers: Closers,
): Promise<{ servers: MediaServers; directory: RedisMediaServers | null }> {
  const ownId = config.media.serverId;
  if (!redis) return { servers: singleMediaServer(ownId, media.orchestrator), directory: null };
  const directory = new RedisMediaServers({
    redis,
    keyPrefix: config.keyPrefix,
    client: (baseUrl) =>
      new HttpMediaOrchestrator({
        baseUrl,
        internalToken: config.media.internalToken ?? '',
        timeoutMs: config.media.timeoutMs,
        closeRetry: config.media.closeRetry,
        logger: logger.child({ module: 'media-client', baseUrl }),
      }),
    own: media.orchestrator ? { id: ownId, orchestrator: media.orchestrator } : null,
    logger: logger.child({ module: 'media-directory' }),
  });
  await directory.start();
  closers.push(() => Promise.resolve(directory.stop()));
  return { servers: directory, directory };
}

/**
 * Each room kind's `MoveMediaServer`, through its API (forwarded to the room's owner, which
 * names the move in the cell: src/media-cluster/media-failover.ts).
 */
export function roomMovers(apis: {
  meetings: MeetingApi;
  voice: VoiceRoomApi;
}): Readonly<Record<MediaRoomKind, RoomMover>> {
  const serverOf = (reply: unknown) =>
    (reply as { media_server?: string | null }).media_server ?? null;
  return {
    meeting: async (key, from, to, requestId) =>
      serverOf(
        await apis.meetings.call('MoveMediaServer', {
          app_code: key.appCode,
          room_code: key.roomId,
          caller_id: FAILOVER_CALLER,
          request_id: requestId,
          from_server: from,
          to_server: to,
        }),
      ),
    voice_room: async (key, from, to, requestId) =>
      serverOf(
        await apis.voice.call('MoveMediaServer', {
          app_code: key.appCode,
          room_id: key.roomId,
          request_id: requestId,
          from_server: from,
          to_server: to,
        }),
      ),
  };
}

/** Moves the rooms of the directory's dead servers through their cells' owners. */
export function wireMediaFailover(
  directory: RedisMediaServers | null,
  apis: { meetings: MeetingApi; voice: VoiceRoomApi },
  logger: Logger,
  closers: Closers,
): MediaFailover | null {
  if (!directory) return null;
  const failover = new MediaFailover({
    roomsOf: (id) => directory.keys.roomsOf(id),
    forgetDead: (id) => directory.keys.forgetDead(id),
    lostBoot: (id) => directory.lostBoot(id),
    place: () => directory.place(),
    movers: roomMovers(apis),
    logger,
  });
  directory.listen({ onDead: failover.onDead });
  closers.push(() => failover.close());
  return failover;
}

/**
 * This node process as a media holder in Redis (src/adapters/redis/media-holders.ts); null
 * without Redis. Leaves the directory after the sockets released their media (closers run in
 * reverse: this one is pushed before the signalling's).
 */
export async function wireMediaHolders(
  config: Config,
  redis: Redis | null,
  logger: Logger,
  closers: Closers,
): Promise<RedisMediaHolders | null> {
  if (!redis) return null;
  const holders = new RedisMediaHolders({
    redis,
    keyPrefix: config.keyPrefix,
    nodeId: config.nodeId,
    ttlMs: config.media.holderTtlMs,
    logger,
  });
  await holders.start();
  closers.push(() => holders.stop());
  return holders;
}

/** Every node releases what dead nodes' sockets held, every holder TTL. */
export function sweepOrphanMedia(
  config: Config,
  holders: RedisMediaHolders | null,
  signalling: { meeting: MeetingMedia; voice: VoiceMedia },
  logger: Logger,
  closers: Closers,
): void {
  if (!holders) return;
  const sweep = new OrphanMediaSweep({
    holders,
    release: {
      meeting: (key, userId, server, holder) =>
        signalling.meeting.signalling.releaseUserMedia(key, userId, server, holder),
      voice_room: (key, userId, server, holder) =>
        signalling.voice.signalling.releaseHeldBy(key, userId, server, holder),
    },
    intervalMs: config.media.holderTtlMs,
    logger,
  });
  sweep.start();
  closers.push(() => sweep.stop());
}
