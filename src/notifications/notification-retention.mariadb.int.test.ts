import { mariadbRedisBackend } from '../cell/testing/harness.js';
import { clusterSkipReason } from '../testing/backends.js';
import { notificationRetentionContract } from './notification-retention.contract.js';

notificationRetentionContract('MariaDB', () => mariadbRedisBackend(), {
  skip: await clusterSkipReason(),
});
