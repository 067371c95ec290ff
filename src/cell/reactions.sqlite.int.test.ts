import { reactionsContract } from './reactions.contract.js';
import { sqliteMemoryBackend } from './testing/harness.js';

reactionsContract(sqliteMemoryBackend);
