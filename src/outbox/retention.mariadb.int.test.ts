import { mariadbRedisBackend } from '../cell/testing/harness.js';
import { clusterSkipReason } from '../testing/backends.js';
import { retentionContract } from './retention.contract.js';

retentionContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
