/**
 * `npm run start:media`: a standalone media server configured by the `ROOMS_MEDIA_*`
 * variables (read through src/main/config.ts). SIGTERM/SIGINT close it.
 */
import pino from 'pino';
import { ConfigError, loadConfig } from '../main/config.js';
import { startMediaServer } from './server.js';

async function main(): Promise<void> {
  let config;
  let internalToken: string;
  try {
    config = loadConfig(process.env);
    // A standalone server is reached by other processes: they must share the token.
    if (!config.media.internalToken) {
      throw new ConfigError(
        'invalid configuration:\n  ROOMS_MEDIA_INTERNAL_TOKEN: required for a standalone media server',
      );
    }
    internalToken = config.media.internalToken;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, base: { node: `${config.nodeId}-media` } });
  const server = await startMediaServer({ ...config.media.server, internalToken }, logger);
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
