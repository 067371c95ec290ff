/** Every dimension `npm run bench:scale` runs, in order. */
import { connections } from './connections.js';
import type { ScaleDimension } from './dimension.js';
import { fanoutDimension } from './fanout.js';
import { meetingsDimension } from './meetings.js';
import { rooms } from './rooms.js';
import { sweeper } from './sweeper.js';

export const DIMENSIONS: readonly ScaleDimension[] = [
  fanoutDimension,
  connections,
  rooms,
  sweeper,
  meetingsDimension,
];
