/**
 * How the media helpers try again what failed for a reason that may pass: a voice room's
 * media join, a consumer. Waits double from `first` up to `max`.
 */

/** The wait before the next try of a join or a consumer. */
export const RETRY_MS = { first: 1_000, max: 15_000 };
/** A consumer is given up (the error shown) after this many transient failures in a row. */
export const CONSUME_ATTEMPTS = 5;

/** The wait after `failures` failures in a row (0: the first retry). */
export const backoff = (limits: { first: number; max: number }, failures: number): number =>
  Math.min(limits.max, limits.first * 2 ** failures);

/** Whether a failed media request may succeed later (a failover, a drop: ../transient.ts). */
export { isTransient as mayPass } from '../transient.js';

/** Timers of pending retries, ended together when what they would retry is gone. */
export class RetryTimers {
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  /** Runs `retry` after `ms`, unless {@link clear} comes first. */
  later(ms: number, retry: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      retry();
    }, ms);
    this.timers.add(timer);
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
