import { lostCoordinationContract } from './lost-coordination.contract.js';
import { sqliteMemoryBackend } from './testing/harness.js';

lostCoordinationContract(sqliteMemoryBackend);
