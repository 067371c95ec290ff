/** Every dimension `npm run bench:scale` runs, in order. */
import type { ScaleDimension } from './dimension.js';
import { fanoutDimension } from './fanout.js';
import { meetingsDimension } from './meetings.js';

export const DIMENSIONS: readonly ScaleDimension[] = [fanoutDimension, meetingsDimension];
