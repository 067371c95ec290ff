import { sqliteMemoryBackend } from '../cell/testing/harness.js';
import { retentionContract } from './retention.contract.js';

retentionContract(sqliteMemoryBackend);
