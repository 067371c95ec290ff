/**
 * Wires voice rooms' audio into a node: the `voice.*` media signalling on the WebSocket
 * hub, the check of every room's producers against its seats (after commits and every few
 * seconds), and the relay of the media server's events into the rooms' RTC commands and
 * speaker frames: from the embedded media server in process, or from a separate one over
 * its event stream (`GET /internal/v1/events`, resumed after a drop).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { MediaEventStream } from '../adapters/media/media-event-stream.js';
import { MemoryRoomMediaState } from '../adapters/memory/memory-meeting-media.js';
import { RedisRoomMediaState } from '../adapters/redis/redis-meeting-media.js';
import type { CommittedBatch } from '../cell/cell-events.js';
import type { CellKey } from '../cell/lease.js';
import { VoiceMediaBridge } from '../edge/voice-ws/media-bridge.js';
import { VoiceMediaSignalling } from '../edge/voice-ws/signalling.js';
import type { VoiceRoomApi } from '../edge/voice/voice-api.js';
import type { WsHub } from '../edge/ws/hub.js';
import type { MediaServers } from '../meeting/media-servers.js';
import type { RealtimePublisher } from '../realtime/publisher.js';
import type { Config } from './config.js';
import type { NodeMedia } from './node.js';

export interface VoiceMedia {
  readonly signalling: VoiceMediaSignalling;
  readonly bridge: VoiceMediaBridge;
  /** The host's commit listener for voice-room cells. */
  onCommitted(batch: CommittedBatch): void;
  close(): Promise<void>;
}

export function wireVoiceMedia(deps: {
  config: Config;
  hub: WsHub;
  publisher: RealtimePublisher;
  api: VoiceRoomApi;
  media: MediaServers;
  nodeMedia: NodeMedia;
  redis: Redis | null;
  owns: (key: CellKey) => boolean;
  logger: Logger;
}): VoiceMedia {
  const { config, logger } = deps;
  const signalling = new VoiceMediaSignalling({
    hub: deps.hub,
    api: deps.api,
    media: deps.media,
    state: deps.redis
      ? new RedisRoomMediaState({ redis: deps.redis, keyPrefix: config.keyPrefix })
      : new MemoryRoomMediaState(),
    broadcaster: deps.publisher,
    logger,
    reconcileMs: config.voice.mediaCheckMs,
  });
  const bridge = new VoiceMediaBridge({
    api: deps.api,
    broadcaster: deps.publisher,
    serverId: config.media.serverId,
    owns: deps.owns,
    logger,
  });
  let stopEvents: () => void = () => undefined;
  const { server, orchestrator } = deps.nodeMedia;
  if (server) {
    stopEvents = server.events.subscribe(bridge.onEvent);
  } else if (orchestrator && config.media.internalToken) {
    const stream = new MediaEventStream(
      {
        baseUrl: config.media.url,
        internalToken: config.media.internalToken,
        logger: logger.child({ module: 'media-events' }),
      },
      bridge.onEvent,
    );
    stopEvents = () => stream.close();
  }
  if (orchestrator) signalling.start();
  return {
    signalling,
    bridge,
    onCommitted: (batch) => signalling.onCommitted(batch),
    async close() {
      stopEvents();
      await bridge.close();
      await signalling.close();
    },
  };
}
