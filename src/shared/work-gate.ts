/**
 * A bounded-concurrency gate: at most `concurrency` tasks run at once, at most `maxQueued`
 * wait in arrival order, and past that a task is refused at once (`unavailable`, retryable).
 * Used for CPU-heavy work (password hashing on libuv's thread pool), so a flood queues in a
 * bounded line instead of occupying every pool thread and every byte of memory.
 */
import { errors } from './error-codes.js';

export class WorkGate {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(
    readonly concurrency: number,
    readonly maxQueued: number,
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
    }
    if (!Number.isInteger(maxQueued) || maxQueued < 0) {
      throw new RangeError(`maxQueued must be a non-negative integer, got ${maxQueued}`);
    }
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `task` once a slot is free; its slot is released when it settles.
   * @throws AppError `unavailable` (`BUSY`) when the queue is full: nothing ran.
   */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.concurrency) {
      if (this.#waiting.length >= this.maxQueued) {
        throw errors.BUSY();
      }
      // The releasing task hands its slot over directly (#running stays counted).
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}
