/**
 * When a batch also writes a snapshot of the room's state. Every `snapshotEvery` versions
 * (ROOMS_SNAPSHOT_EVERY) at the least, so that an activation replays few commands; and not
 * before the log written since the last snapshot is about as large as that snapshot, so
 * that snapshots cost O(1) per command however large the state: a room of 10,000 present
 * members snapshots 1.6 MB, which every 100 heartbeats (a few times a second) would be most
 * of the room's work. Sized by the last snapshot, which the state outgrows slowly.
 */
import type { Tip } from './flight.js';

/** About what one logged command adds to the log (its row: ids, command, events). */
export const LOG_BYTES_PER_VERSION = 256;

export function isSnapshotDue(
  base: Pick<Tip<unknown>, 'snapshotVersion' | 'snapshotBytes'>,
  version: number,
  snapshotEvery: number,
): boolean {
  const interval = Math.max(snapshotEvery, Math.ceil(base.snapshotBytes / LOG_BYTES_PER_VERSION));
  return version - base.snapshotVersion >= interval;
}
