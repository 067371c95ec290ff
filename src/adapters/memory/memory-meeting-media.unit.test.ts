import { manualTime } from '../lease.contract.js';
import { meetingMediaContract } from '../meeting-media.contract.js';
import { MemoryRoomMediaState } from './memory-meeting-media.js';

meetingMediaContract('memory', () => {
  const { clock, control } = manualTime();
  return Promise.resolve({
    state: new MemoryRoomMediaState({ clock, ttlMs: control.shortTtlMs }),
    clock: control,
    cleanup: async () => {},
  });
});
