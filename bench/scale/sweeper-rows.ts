/**
 * The `sweeper` dimension's table contents, pure so they are unit-tested: room_cells rows
 * as a few alarm-bearing rooms among many without one, inserted as literal-value INSERTs
 * (far faster than activating a million rooms).
 */

/** Rows per INSERT statement (well under MariaDB's packet and SQLite's statement limits). */
export const ROWS_PER_INSERT = 5_000;

/**
 * Room `i`'s alarm: 1 in 100 is due (a minute or more ago), 1 in 10 is due in an hour, the
 * rest have none (most rooms at rest wait for nothing).
 */
export function alarmOf(i: number, nowMs: number): number | null {
  if (i % 100 === 0) return nowMs - 60_000 - i;
  if (i % 10 === 1) return nowMs + 3_600_000 + i;
  return null;
}

/** How many of rooms 0..count-1 are due at `nowMs`. */
export function dueCount(count: number): number {
  return Math.ceil(count / 100);
}

/** One INSERT of rooms `from`..`from + count - 1` into room_cells (numbers and fixed ids only). */
export function insertCellsSql(from: number, count: number, nowMs: number): string {
  const values: string[] = [];
  for (let i = from; i < from + count; i++) {
    const alarm = alarmOf(i, nowMs);
    values.push(
      `('scale','r${i}','counter',1,1,'{"count":1,"alarms":[],"fired":[]}',1,${alarm ?? 'NULL'},${nowMs},${nowMs})`,
    );
  }
  return (
    'insert into room_cells (app_code, room_id, kind, version, lease_epoch, snapshot, ' +
    `snapshot_version, next_alarm_ms, created_at_ms, updated_at_ms) values ${values.join(',')}`
  );
}
