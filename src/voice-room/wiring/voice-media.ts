/**
 * Wires voice rooms' audio into a node: the `voice.*` media signalling on the WebSocket
 * hub, the check of every room's producers against its seats (after commits and every few
 * seconds), and the bridge that turns the media server's events into the rooms' RTC
 * commands and speaker frames (the node feeds it: ../../main/media-events.ts).
 */
import type { Logger } from 'pino';
import type { ReactionHandler } from '../../cell/reactions.js';
import type { CellKey } from '../../cell/lease.js';
import { VoiceMediaBridge } from '../signalling/media-bridge.js';
import { VoiceMediaSignalling } from '../signalling/signalling.js';
import type { VoiceRoomApi } from '../api/voice-api.js';
import type { MediaHolders, RoomMediaState } from '../../edge/room-media/ports.js';
import type { WsHub } from '../../edge/ws/hub.js';
import type { MediaFailover } from '../../media-cluster/media-failover.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';
import type { RealtimePublisher } from '../../realtime/publisher.js';
import type { Config } from '../../main/config.js';
import type { NodeMedia } from '../../main/node-media.js';
import { ownMediaServerId } from '../../main/media-cluster.js';

export interface VoiceMedia {
  readonly signalling: VoiceMediaSignalling;
  readonly bridge: VoiceMediaBridge;
  /** The host's commit listener for voice-room cells. */
  /** What a voice room's commits make happen on its media server (../../cell/reactions.ts). */
  readonly reactions: ReadonlyMap<string, ReactionHandler>;
  close(): Promise<void>;
}

export function wireVoiceMedia(deps: {
  config: Config;
  hub: WsHub;
  publisher: RealtimePublisher;
  api: VoiceRoomApi;
  media: MediaServers;
  nodeMedia: NodeMedia;
  state: RoomMediaState;
  owns: (key: CellKey) => boolean;
  logger: Logger;
  /** Moves voice rooms off lost media servers (null: a node without a media directory). */
  failover: MediaFailover | null;
  /** Which node process holds what (null: no cluster). */
  holders: MediaHolders | null;
}): VoiceMedia {
  const { config, logger, failover } = deps;
  const signalling = new VoiceMediaSignalling({
    hub: deps.hub,
    api: deps.api,
    media: deps.media,
    state: deps.state,
    broadcaster: deps.publisher,
    logger,
    reconcileMs: config.voice.mediaCheckMs,
    fallbackServer: ownMediaServerId(config, deps.nodeMedia),
    ...(failover ? { rescue: (key, from) => failover.rescue('voice_room', key, from) } : {}),
    ...(deps.holders ? { holders: deps.holders } : {}),
    caps: config.media.caps,
    turn: config.media.turn,
    plainRtp: config.media.plainRtp,
  });
  const bridge = new VoiceMediaBridge({
    api: deps.api,
    broadcaster: deps.publisher,
    serverId: config.media.serverId,
    owns: deps.owns,
    logger,
  });
  if (deps.nodeMedia.orchestrator) signalling.start();
  return {
    signalling,
    bridge,
    reactions: signalling.reactionHandlers(),
    async close() {
      await bridge.close();
      await signalling.close();
    },
  };
}
