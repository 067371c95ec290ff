/**
 * Follows the media servers' events, once for every listener, each event with the id of the
 * server it came from: this node's own server (the embedded server's bus in process, or a
 * separate server's event stream, `GET /internal/v1/events`, resumed after a drop with
 * Last-Event-ID), and, in a cluster with a media directory, every other live registered
 * server's stream (started when it registers, stopped when it leaves or dies).
 */
import type { Logger } from 'pino';
import { MediaEventStream } from '../adapters/media/media-event-stream.js';
import type { RedisMediaServers } from '../adapters/redis/redis-media-servers.js';
import type { MediaEvent } from '../media-server/events.js';
import type { Config } from './config.js';
import type { NodeMedia } from './node-media.js';

/** A media event, and the id of the server it came from. */
export type ServerMediaEventListener = (event: MediaEvent, serverId: string) => void;

/**
 * Starts following; returns the function that stops it. `onGap(serverId)`: that server's
 * stream dropped, so events of it may have been missed.
 */
export function followMediaEvents(
  config: Config,
  media: NodeMedia,
  logger: Logger,
  listeners: readonly ServerMediaEventListener[],
  directory: RedisMediaServers | null = null,
  onGap: (serverId: string) => void = () => undefined,
): () => void {
  const log = logger.child({ module: 'media-events' });
  const fanOut = (serverId: string) => (event: MediaEvent) => {
    for (const listener of listeners) listener(event, serverId);
  };
  const ownId = config.media.serverId;
  const token = config.media.internalToken;
  const stream = (serverId: string, baseUrl: string, internalToken: string) =>
    new MediaEventStream(
      { baseUrl, internalToken, logger: log, onDrop: () => onGap(serverId) },
      fanOut(serverId),
    );
  const stops: (() => void)[] = [];
  let followsOwn = false;
  if (media.server) {
    stops.push(media.server.events.subscribe(fanOut(ownId)));
    followsOwn = true;
  } else if (media.orchestrator && token) {
    const own = stream(ownId, config.media.url, token);
    stops.push(() => own.close());
    followsOwn = true;
  }
  if (directory && token) {
    const others = new Map<string, { url: string; stream: MediaEventStream }>();
    const sync = (live: RedisMediaServers['live']) => {
      for (const [id, record] of live) {
        if ((id === ownId && followsOwn) || others.get(id)?.url === record.url) continue;
        others.get(id)?.stream.close();
        others.set(id, { url: record.url, stream: stream(id, record.url, token) });
      }
      for (const [id, followed] of others) {
        if (live.has(id)) continue;
        followed.stream.close();
        others.delete(id);
      }
    };
    directory.listen({ onLive: sync });
    sync(directory.live);
    stops.push(() => {
      for (const { stream: s } of others.values()) s.close();
      others.clear();
    });
  }
  return () => {
    for (const stop of stops) stop();
  };
}
