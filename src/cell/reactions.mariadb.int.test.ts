import { clusterSkipReason } from '../testing/backends.js';
import { reactionsContract } from './reactions.contract.js';
import { mariadbRedisBackend } from './testing/harness.js';

reactionsContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
