import { sqliteMemoryBackend } from '../../cell/testing/harness.js';
import { roomFrameLogContract } from './room-frame-log.contract.js';

roomFrameLogContract(sqliteMemoryBackend);
