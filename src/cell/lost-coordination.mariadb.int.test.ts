import { clusterSkipReason } from '../testing/backends.js';
import { lostCoordinationContract } from './lost-coordination.contract.js';
import { mariadbRedisBackend } from './testing/harness.js';

lostCoordinationContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
