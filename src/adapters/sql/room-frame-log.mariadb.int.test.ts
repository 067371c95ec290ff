import { mariadbRedisBackend } from '../../cell/testing/harness.js';
import { clusterSkipReason } from '../../testing/backends.js';
import { roomFrameLogContract } from './room-frame-log.contract.js';

roomFrameLogContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
