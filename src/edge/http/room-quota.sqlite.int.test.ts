/** Room-creation quotas on one embedded node (counters in memory). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestNode } from './auth-routes.contract.js';
import { QUOTA_ENV, roomQuotaContract } from './room-quota.contract.js';

roomQuotaContract('SQLite, one node', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-quota-'));
  const node = await startTestNode({ ROOMS_DB_URL: join(dir, 'rooms.sqlite'), ...QUOTA_ENV });
  return {
    nodes: [node],
    close: async () => {
      await node.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
