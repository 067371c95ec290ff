/**
 * Every dimension `npm run bench:scale` runs, in order; with `BENCH_SCALE_RERUN=logs` only
 * the named ones, the others' figures kept from the existing report (./kept.ts).
 */
import { connections } from './connections.js';
import type { ScaleDimension } from './dimension.js';
import { fanoutDimension } from './fanout.js';
import { rerunOnly } from './kept.js';
import { logs } from './logs.js';
import { meetingsDimension } from './meetings.js';
import { rooms } from './rooms.js';
import { sweeper } from './sweeper.js';

export const ALL_DIMENSIONS: readonly ScaleDimension[] = [
  fanoutDimension,
  connections,
  rooms,
  sweeper,
  logs,
  meetingsDimension,
];

export const DIMENSIONS: readonly ScaleDimension[] = rerunOnly(ALL_DIMENSIONS);
