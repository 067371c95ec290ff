import { sqliteMemoryBackend } from '../cell/testing/harness.js';
import { claimContract } from './claim.contract.js';

claimContract(sqliteMemoryBackend);
