import { leaseContract, manualTime } from '../lease.contract.js';
import { MemoryLeaseManager } from './memory-lease.js';
import { MemoryNodeRegistry } from './memory-node-registry.js';

leaseContract('memory', () => {
  const { clock, control } = manualTime();
  return Promise.resolve({
    lease: new MemoryLeaseManager({ clock }),
    registry: new MemoryNodeRegistry({ clock }),
    clock: control,
    cleanup: async () => {},
  });
});
