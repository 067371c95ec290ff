/**
 * What one socket may ask of the node: a token bucket of C→S frames (`ratePerSecond` refill,
 * `burst` capacity) and at most `maxInFlight` of its requests handled at once, the next ones
 * waiting in order (at most `burst` of them). A socket past the rate or the waiting line is
 * closed (4029): one client's burst then costs a bounded amount of work and memory, however
 * many frames it has queued, and the node stays responsive to everyone else. Pipelining is
 * fine: a client re-subscribing to its 50 rooms at once waits, it is not cut.
 */
import { performance } from 'node:perf_hooks';

export interface FrameLimits {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly maxInFlight: number;
}

export class FrameBudget {
  #tokens: number;
  #refilledAt: number;
  #inFlight = 0;
  readonly #waiting: (() => Promise<void>)[] = [];

  constructor(
    private readonly limits: FrameLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#tokens = limits.burst;
    this.#refilledAt = now();
  }

  /** Takes one frame's token; false when the bucket is empty (too many frames). */
  take(): boolean {
    const now = this.now();
    const elapsedS = Math.max(0, now - this.#refilledAt) / 1000;
    this.#tokens = Math.min(this.limits.burst, this.#tokens + elapsedS * this.limits.ratePerSecond);
    this.#refilledAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /**
   * Runs `task` now if fewer than `maxInFlight` run, else after the ones before it; false
   * (and nothing queued) when `burst` tasks already wait.
   */
  run(task: () => Promise<void>): boolean {
    if (this.#inFlight < this.limits.maxInFlight) {
      this.#start(task);
      return true;
    }
    if (this.#waiting.length >= this.limits.burst) return false;
    this.#waiting.push(task);
    return true;
  }

  /** Forgets the waiting tasks (the socket closed); running ones finish on their own. */
  clear(): void {
    this.#waiting.length = 0;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  #start(task: () => Promise<void>): void {
    this.#inFlight += 1;
    void task()
      .catch(() => undefined) // tasks handle their own errors; a slot must never leak
      .finally(() => {
        this.#inFlight -= 1;
        const next = this.#waiting.shift();
        if (next) this.#start(next);
      });
  }
}
