/**
 * The notification centre's contract on the cluster backend: MariaDB and the Redis bus, two
 * nodes (notifications pushed on one reach sockets and REST calls on the other).
 */
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../testing/backends.js';
import { notificationCentreContract } from './notification-centre.contract.js';

notificationCentreContract(
  'MariaDB + Redis',
  async () => {
    const database = await createTestDatabase();
    const keyPrefix = testKeyPrefix();
    return {
      env: {
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '4',
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_JWT_SECRET: 'mariadb-notification-secret-0123456789abcdef',
      },
      nodes: 2,
      async close() {
        await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
        await database.drop();
      },
    };
  },
  { skip: await clusterSkipReason() },
);
