/**
 * Availability gap of a fault, per room: from the moment the fault took effect to the end of
 * the first attempt, started at or after that moment, that got a final answer from the room
 * (a success or a domain refusal: either way the room decided). Only rooms the workload
 * touched after the fault count; the fault's gap is its worst room's. A room still without
 * an answer when the next fault or the end comes is "not recovered".
 */
import type { InjectedFault, FaultType } from './faults.js';
import { isFinal, type RequestRecord } from './history.js';

export interface FaultGap {
  readonly type: FaultType;
  readonly detail: string;
  readonly atMs: number;
  /** The worst room's gap; null: some room got no answer before the window closed. */
  readonly gapMs: number | null;
  readonly worstRoom: string | null;
  readonly rooms: number;
}

export interface GapSummary {
  readonly type: FaultType;
  readonly count: number;
  readonly medianMs: number | null;
  readonly maxMs: number | null;
  readonly targetMs: number;
  readonly notRecovered: number;
}

interface RoomAttempt {
  readonly room: string;
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  readonly final: boolean;
}

function roomAttempts(requests: readonly RequestRecord[]): RoomAttempt[] {
  return requests
    .filter((r) => (r.api === 'voice' || r.api === 'meeting') && r.room !== null)
    .flatMap((r) =>
      r.attempts.map((a) => ({
        room: `${r.api}:${r.room}`,
        startedAtMs: a.startedAtMs,
        endedAtMs: a.endedAtMs,
        final: isFinal(a.answer),
      })),
    );
}

/** Each process fault's gap; the window of a fault ends at the next fault (or `endMs`). */
export function faultGaps(
  faults: readonly InjectedFault[],
  requests: readonly RequestRecord[],
  endMs: number,
): FaultGap[] {
  const attempts = roomAttempts(requests);
  const processFaults = faults
    .filter((f) => !f.type.startsWith('rtc-'))
    .sort((a, b) => a.atMs - b.atMs);
  return processFaults.map((fault, i) => {
    const windowEnd = processFaults[i + 1]?.atMs ?? endMs;
    const after = attempts.filter((a) => a.startedAtMs >= fault.atMs && a.startedAtMs < windowEnd);
    const rooms = new Set(after.map((a) => a.room));
    let worst: { room: string; gap: number | null } | null = null;
    for (const room of rooms) {
      const answered = after
        .filter((a) => a.room === room && a.final)
        .reduce<number | null>(
          (min, a) => (min === null || a.endedAtMs < min ? a.endedAtMs : min),
          null,
        );
      const gap = answered === null ? null : answered - fault.atMs;
      // null (no answer) is the worst there is and stays.
      if (worst === null || (worst.gap !== null && (gap === null || gap > worst.gap))) {
        worst = { room, gap };
      }
    }
    return {
      type: fault.type,
      detail: fault.detail,
      atMs: fault.atMs,
      gapMs: worst?.gap ?? null,
      worstRoom: worst?.room ?? null,
      rooms: rooms.size,
    };
  });
}

export function summarizeGaps(
  gaps: readonly FaultGap[],
  targets: Readonly<Record<string, number>>,
): GapSummary[] {
  const types = [...new Set(gaps.map((g) => g.type))];
  return types.map((type) => {
    const of = gaps.filter((g) => g.type === type);
    const measured = of.flatMap((g) => (g.gapMs === null ? [] : [g.gapMs])).sort((a, b) => a - b);
    return {
      type,
      count: of.length,
      medianMs: measured.length ? measured[Math.floor((measured.length - 1) / 2)]! : null,
      maxMs: measured.length ? measured.at(-1)! : null,
      targetMs: targets[type] ?? Number.NaN,
      notRecovered: of.length - measured.length,
    };
  });
}
