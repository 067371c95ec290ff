/**
 * `npm run start:media`: a standalone media server configured by its own variables only
 * (./config.ts: `ROOMS_MEDIA_*`, `ROOMS_NODE_ID`, `ROOMS_LOG_LEVEL`; the rooms node's settings
 * are ignored). A bad or missing one exits 2 naming it. SIGINT closes it. SIGTERM closes
 * it too, but a registered server (`ROOMS_MEDIA_REDIS_URL`) drains first: it takes no new
 * rooms and exits once its rooms are gone, or after `ROOMS_MEDIA_DRAIN_TIMEOUT_MS` (the
 * nodes then move the rooms left). A second signal closes it at once.
 */
import pino from 'pino';
import { ConfigError } from '../shared/env.js';
import { loadMediaServerConfig } from './config.js';
import { startMediaServer, type MediaServer } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadMediaServerConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, base: { node: `${config.nodeId}-media` } });
  const server = await startMediaServer(config.server, logger, process.env, config.registration);
  let stopping = false;
  let draining = false;
  const stop = (signal: string) => {
    if (stopping) return;
    if (signal === 'SIGTERM' && server.heartbeat && !draining) {
      draining = true;
      drainThenStop(server, config.drainTimeoutMs, logger).then(
        () => stop('drained'),
        () => stop('drained'),
      );
      return;
    }
    stopping = true;
    logger.info({ signal }, 'media server stopping');
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'media server close failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Takes no new rooms, then waits until it has none, or `timeoutMs` passed. */
async function drainThenStop(
  server: MediaServer,
  timeoutMs: number,
  logger: pino.Logger,
): Promise<void> {
  await server.setDraining(true);
  const until = Date.now() + timeoutMs;
  while (server.registry.roomCodes.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  logger.info({ roomsLeft: server.registry.roomCodes.length }, 'media server drained');
}

main().catch((error: unknown) => {
  process.stderr.write(
    `media server failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
