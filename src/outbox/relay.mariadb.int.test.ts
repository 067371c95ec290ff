import { mariadbRedisBackend } from '../cell/testing/harness.js';
import { clusterSkipReason } from '../testing/backends.js';
import { relayContract } from './relay.contract.js';

relayContract(() => mariadbRedisBackend(), { skip: await clusterSkipReason() });
