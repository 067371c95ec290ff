import { firstOutcomeContract } from './first-outcome.contract.js';
import { sqliteMemoryBackend } from './testing/harness.js';

firstOutcomeContract(sqliteMemoryBackend);
