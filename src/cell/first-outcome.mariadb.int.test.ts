import { clusterSkipReason } from '../testing/backends.js';
import { firstOutcomeContract } from './first-outcome.contract.js';
import { mariadbRedisBackend } from './testing/harness.js';

firstOutcomeContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
