/**
 * `npm start`: one node from the environment. SIGTERM/SIGINT drain it (its rooms handed over
 * to the other nodes) and exit 0, or exit 1 when ROOMS_DRAIN_TIMEOUT_MS passes first. A bad
 * configuration exits 2: a bad variable, or a start refused (e.g. ROOMS_ADVERTISE_ADDR
 * answered by another node).
 */
import { ConfigError, loadConfig } from './config.js';
import { createLogger, startNode } from './node.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config);
  // Installed before start-up so a signal during it still drains once the node is up.
  let stopSignal: string | null = null;
  let stop: (signal: string) => void = (signal) => (stopSignal ??= signal);
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const node = await startNode(config, logger);
  logger.info(
    { http: node.httpAddress, db: node.sql.flavor, redis: Boolean(config.redisUrl) },
    'node ready',
  );
  let stopping = false;
  stop = (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    // The drain's deadline is the process's: whatever still holds it up then is cut short
    // (its leases expire by TTL and the SQL fence guards the rest). Exit 1 says it was forced.
    setTimeout(() => {
      logger.error(
        { drainTimeoutMs: config.cell.drainTimeoutMs },
        'drain deadline passed, exiting',
      );
      process.exit(1);
    }, config.cell.drainTimeoutMs).unref();
    node.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'drain failed');
        process.exit(1);
      },
    );
  };
  if (stopSignal) stop(stopSignal);
}

main().catch((error: unknown) => {
  // Found only once the node runs, e.g. an advertise address another instance answers.
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
