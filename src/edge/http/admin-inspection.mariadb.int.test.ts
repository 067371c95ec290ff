/** The admin inspection API on MariaDB (a database of its own, dropped afterwards). */
import { clusterSkipReason, createTestDatabase } from '../../testing/backends.js';
import { adminInspectionContract } from './admin-inspection.contract.js';

adminInspectionContract(
  'MariaDB',
  async () => {
    const database = await createTestDatabase();
    return {
      env: {
        ROOMS_DB_URL: database.url,
        ROOMS_DB_POOL_SIZE: '4',
        // Cluster mode wants one (unused here: the harness serves no gRPC).
        ROOMS_GRPC_TOKEN: 'inspection-test-grpc-token-0123456789abcdef',
      },
      close: () => database.drop(),
    };
  },
  { skip: await clusterSkipReason() },
);
