/**
 * Test-only entry point for the realtime end-to-end test: exactly `npm start`'s
 * composition (`startNode`), plus a follow policy that lets every authenticated user
 * follow any room of their app, so the test can watch rooms of its counter kind without a
 * room kind's membership rules. Production never loads this file.
 */
import { loadConfig } from '../../main/config.js';
import { createLogger, startNode } from '../../main/node.js';

const config = loadConfig(process.env);
const logger = createLogger(config);
const node = await startNode(config, logger, { canFollow: () => Promise.resolve(true) });
logger.info({ http: node.httpAddress }, 'node ready');
const stop = (): void => {
  node.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
