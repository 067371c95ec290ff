import { mariadbRedisBackend } from '../cell/testing/harness.js';
import { clusterSkipReason } from '../testing/backends.js';
import { claimContract } from './claim.contract.js';

claimContract(() => mariadbRedisBackend(), {
  skip: await clusterSkipReason(),
  rowLocks: true,
});
