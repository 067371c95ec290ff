/**
 * `npm run start:media`: a standalone media server configured by its own variables only
 * (./config.ts: `ROOMS_MEDIA_*`, `ROOMS_NODE_ID`, `ROOMS_LOG_LEVEL`; the rooms node's settings
 * are ignored). A bad or missing one exits 2 naming it. SIGTERM/SIGINT close it.
 */
import pino from 'pino';
import { ConfigError } from '../shared/env.js';
import { loadMediaServerConfig } from './config.js';
import { startMediaServer } from './server.js';

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
  const server = await startMediaServer(config.server, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
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

main().catch((error: unknown) => {
  process.stderr.write(
    `media server failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
