/**
 * Follows this node's media server's events, once for every listener: the embedded server's
 * bus in process, or a separate server's event stream (`GET /internal/v1/events`, resumed
 * after a drop with Last-Event-ID).
 */
import type { Logger } from 'pino';
import { MediaEventStream } from '../adapters/media/media-event-stream.js';
import type { MediaEventListener } from '../media-server/events.js';
import type { Config } from './config.js';
import type { NodeMedia } from './node.js';

/** Starts following; returns the function that stops it. */
export function followMediaEvents(
  config: Config,
  media: NodeMedia,
  logger: Logger,
  listeners: readonly MediaEventListener[],
): () => void {
  const fanOut: MediaEventListener = (event) => {
    for (const listener of listeners) listener(event);
  };
  if (media.server) return media.server.events.subscribe(fanOut);
  if (!media.orchestrator || !config.media.internalToken) return () => undefined;
  const stream = new MediaEventStream(
    {
      baseUrl: config.media.url,
      internalToken: config.media.internalToken,
      logger: logger.child({ module: 'media-events' }),
    },
    fanOut,
  );
  return () => stream.close();
}
