import { sqliteMemoryBackend } from '../cell/testing/harness.js';
import { relayContract } from './relay.contract.js';

relayContract(sqliteMemoryBackend);
