/** Every dimension `npm run bench:scale` runs, in order. */
import type { ScaleDimension } from './dimension.js';

export const DIMENSIONS: readonly ScaleDimension[] = [];
