/**
 * Which media server a meeting's media lives on. A meeting's router is placed on a server
 * when the meeting is created, and the meeting's state records that server's id; every
 * node then sends the meeting's media calls (router, transports, producers, consumers,
 * closes) to the orchestrator of that id. A node that cannot reach the recorded server
 * answers 会议媒体服务暂不可用 rather than creating media somewhere the others will not look.
 *
 * Without Redis a node knows one server (embedded, or ROOMS_MEDIA_URL, named
 * ROOMS_MEDIA_SERVER_ID); with Redis, the directory of src/adapters/redis/redis-media-servers.ts.
 */
import type { CellKey } from '../cell/lease.js';
import { errors } from '../shared/error-codes.js';
import type { MediaOrchestrator } from './media-orchestrator.js';

/** The room kinds that have media (their cell kinds). */
export type MediaRoomKind = 'meeting' | 'voice_room';

/**
 * The media server's name for a room: `<kind>:<app_code>:<room id>`. Room ids are unique per
 * app only, so two apps' rooms with the same id must never share a router (closing one
 * would end the other's media); the kind tells whose room a media event is about.
 */
export function mediaRoomOf(key: CellKey, kind: MediaRoomKind = 'meeting'): string {
  return `${kind}:${key.appCode}:${key.roomId}`;
}

/** A name of {@link mediaRoomOf} back to its room; null for any other name. */
export function parseMediaRoom(name: string): { kind: MediaRoomKind; key: CellKey } | null {
  const match = /^(meeting|voice_room):([a-z0-9_-]{1,64}):(.+)$/.exec(name);
  if (!match) return null;
  return { kind: match[1] as MediaRoomKind, key: { appCode: match[2]!, roomId: match[3]! } };
}

export interface MediaServers {
  /** The server a new meeting's router goes on; null on a node without media. */
  place(): string | null;
  /** The ids of every server this node reaches. */
  ids(): string[];
  /**
   * The orchestrator of a meeting's recorded server. A null id (a meeting without media)
   * or an id this node cannot reach gives one whose calls fail with MEDIA_SERVER_ERROR
   * (closes succeed: there is nothing here to close).
   */
  of(serverId: string | null): MediaOrchestrator;
  /**
   * The boot of a registered server that is gone from the directory (its record expired, or
   * it left after its listed rooms moved), read afresh: a room still recorded there must
   * move (src/media-cluster/media-failover.ts). Null for a live server (a failed call to it was
   * transient) and for one that never registered.
   */
  lostBoot(serverId: string): Promise<string | null>;
}

/** The directory of a node with one media server (or none: `orchestrator` null). */
export function singleMediaServer(
  id: string,
  orchestrator: MediaOrchestrator | null,
): MediaServers {
  const none = unreachableMediaServer();
  return {
    place: () => (orchestrator ? id : null),
    ids: () => (orchestrator ? [id] : []),
    of: (serverId) => (orchestrator && serverId === id ? orchestrator : none),
    lostBoot: () => Promise.resolve(null),
  };
}

/** Every call is 会议媒体服务暂不可用; closes are no-ops. */
export function unreachableMediaServer(): MediaOrchestrator {
  const refuse = () =>
    Promise.reject(errors.MEDIA_SERVER_ERROR.withCause(new Error('media server not reachable')));
  return {
    createRouter: refuse,
    closeRouter: () => Promise.resolve(),
    createTransport: refuse,
    connectTransport: refuse,
    createPlainTransport: refuse,
    connectPlainTransport: refuse,
    createProducer: refuse,
    createConsumer: refuse,
    resumeConsumer: refuse,
    setConsumerPreferences: refuse,
    recordingSupported: () => Promise.resolve(false),
    startRecording: refuse,
    stopRecording: refuse,
    recording: refuse,
    recordingFile: refuse,
    setProducerPaused: refuse,
    closeTransport: () => Promise.resolve(),
    closeProducer: () => Promise.resolve(),
    closeConsumer: () => Promise.resolve(),
    listRooms: () => Promise.resolve([]),
    listProducers: () => Promise.resolve([]),
    resolveRouterInfo: () => ({ ok: false, routerId: '', rtpCapabilities: null }),
    forgetRouter: () => undefined,
    forgetRouters: () => undefined,
  };
}
