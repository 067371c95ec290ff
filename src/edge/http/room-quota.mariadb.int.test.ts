/** Room-creation quotas on two cluster nodes: counters shared through one Redis. */
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testRedisUrl,
} from '../../testing/backends.js';
import { startTestNode } from './auth-routes.contract.js';
import { QUOTA_ENV, roomQuotaContract } from './room-quota.contract.js';

roomQuotaContract(
  'MariaDB + Redis, two nodes',
  async () => {
    const database = await createTestDatabase();
    const keyPrefix = testKeyPrefix();
    const env = {
      ROOMS_DB_URL: database.url,
      ROOMS_DB_POOL_SIZE: '4',
      ROOMS_JWT_SECRET: 'quota-test-secret-of-at-least-32-bytes!',
      ROOMS_REDIS_URL: testRedisUrl(),
      ROOMS_KEY_PREFIX: keyPrefix,
      ...QUOTA_ENV,
    };
    const nodes = [await startTestNode(env), await startTestNode(env)];
    return {
      nodes,
      close: async () => {
        for (const node of nodes) await node.close();
        await deleteKeysWithPrefix(testRedisUrl(), keyPrefix);
        await database.drop();
      },
    };
  },
  { skip: await clusterSkipReason() },
);
