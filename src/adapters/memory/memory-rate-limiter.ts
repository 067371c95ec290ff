/** {@link RateLimiter} in this process: one embedded node (nothing to share). */
import type { Clock } from '../../shared/clock.js';
import type { RateCount, RateLimiter } from '../../shared/rate-limiter.js';

interface Window {
  count: number;
  endsAtMs: number;
}

/** Expired windows are dropped every this many hits, so abandoned keys cost no memory. */
const SWEEP_EVERY = 1_024;

export class MemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #clock: Clock;
  #hitsSinceSweep = 0;

  constructor(deps: { clock: Clock }) {
    this.#clock = deps.clock;
  }

  /** Keys with an open window (for tests and metrics). */
  get size(): number {
    return this.#windows.size;
  }

  hit(key: string, windowMs: number, amount = 1): Promise<RateCount> {
    const now = this.#clock.nowMs();
    if (++this.#hitsSinceSweep >= SWEEP_EVERY) this.#sweep(now);
    let window = this.#open(key, now);
    if (!window) {
      window = { count: 0, endsAtMs: now + Math.max(1, Math.ceil(windowMs)) };
      this.#windows.set(key, window);
    }
    window.count += amount;
    return Promise.resolve({ count: window.count, resetInMs: window.endsAtMs - now });
  }

  peek(key: string): Promise<RateCount> {
    const now = this.#clock.nowMs();
    const window = this.#open(key, now);
    return Promise.resolve(
      window
        ? { count: window.count, resetInMs: window.endsAtMs - now }
        : { count: 0, resetInMs: 0 },
    );
  }

  undo(key: string, amount = 1): Promise<void> {
    const window = this.#open(key, this.#clock.nowMs());
    if (window) window.count = Math.max(0, window.count - amount);
    return Promise.resolve();
  }

  reset(key: string): Promise<void> {
    this.#windows.delete(key);
    return Promise.resolve();
  }

  #open(key: string, now: number): Window | undefined {
    const window = this.#windows.get(key);
    if (window && window.endsAtMs <= now) {
      this.#windows.delete(key);
      return undefined;
    }
    return window;
  }

  #sweep(now: number): void {
    this.#hitsSinceSweep = 0;
    for (const [key, window] of this.#windows)
      if (window.endsAtMs <= now) this.#windows.delete(key);
  }
}
