import { cellRuntimeContract } from './cell-runtime.contract.js';
import { sqliteMemoryBackend } from './testing/harness.js';

cellRuntimeContract(sqliteMemoryBackend);
