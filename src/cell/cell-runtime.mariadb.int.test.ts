import { clusterSkipReason } from '../testing/backends.js';
import { cellRuntimeContract } from './cell-runtime.contract.js';
import { mariadbRedisBackend } from './testing/harness.js';

cellRuntimeContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
