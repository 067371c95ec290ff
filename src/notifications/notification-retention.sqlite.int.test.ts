import { sqliteMemoryBackend } from '../cell/testing/harness.js';
import { notificationRetentionContract } from './notification-retention.contract.js';

notificationRetentionContract('SQLite', sqliteMemoryBackend);
