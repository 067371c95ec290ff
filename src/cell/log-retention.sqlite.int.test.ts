import { logRetentionContract } from './log-retention.contract.js';
import { sqliteMemoryBackend } from './testing/harness.js';

logRetentionContract(sqliteMemoryBackend);
