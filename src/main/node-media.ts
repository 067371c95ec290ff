/**
 * The media side of a node (./node.ts): an embedded media server or a client of a separate
 * one, or none, and what `/healthz` says about it.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { HttpMediaOrchestrator } from '../adapters/media/http-media-orchestrator.js';
import { startMediaServer, type MediaServer } from '../media-server/server.js';
import type { Config } from './config.js';
import { embeddedRegistration } from './media-cluster.js';
import { embeddedMediaHealth, remoteMediaHealth, type MediaHealth } from './media-health.js';

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
