import { clusterSkipReason } from '../testing/backends.js';
import { logRetentionContract } from './log-retention.contract.js';
import { mariadbRedisBackend } from './testing/harness.js';

logRetentionContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
