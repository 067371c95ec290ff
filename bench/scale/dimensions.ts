/** Every dimension `npm run bench:scale` runs, in order. */
import { connections } from './connections.js';
import type { ScaleDimension } from './dimension.js';
import { rooms } from './rooms.js';
import { sweeper } from './sweeper.js';

export const DIMENSIONS: readonly ScaleDimension[] = [connections, rooms, sweeper];
