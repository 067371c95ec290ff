/**
 * A background job that runs soon after `start()` and then every `intervalMs` (±25 %
 * jitter, so the nodes of a cluster do not run in step), one run at a time; `stop()` waits
 * for a run in progress. The retention sweeps (outbox, meeting chats) run on it.
 */
import type { Logger } from 'pino';

export class PeriodicSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly options: {
      readonly intervalMs: number;
      /** One run; resolves with how many rows it handled. */
      readonly run: () => Promise<number>;
      readonly logger: Logger;
      /** For the warning a failed run logs. */
      readonly what: string;
    },
  ) {}

  /** True once `stop()` was called: a long run may end early. */
  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    const { intervalMs, logger, what } = this.options;
    const schedule = (delay: number) => {
      this.timer = setTimeout(() => {
        void this.sweep()
          .catch((err: unknown) => logger.warn({ err }, `${what} failed`))
          .finally(() => {
            if (!this.stopped) schedule(intervalMs * (0.75 + Math.random() / 2));
          });
      }, delay);
      this.timer.unref();
    };
    schedule(Math.random() * Math.min(intervalMs, 5_000));
  }

  /** Stops the timer and waits for a run in progress. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One run now (joins one already in progress). */
  sweep(): Promise<number> {
    this.running ??= this.options.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}

/**
 * A background job on a {@link PeriodicSweep} (the retention sweeps, the router janitor):
 * started when enabled, stopped once, and one sweep run on demand (tests, admin).
 */
export abstract class SweepJob {
  protected readonly logger: Logger;
  protected readonly loop: PeriodicSweep;

  constructor(options: {
    readonly intervalMs: number;
    readonly logger: Logger;
    readonly what: string;
  }) {
    this.logger = options.logger;
    this.loop = new PeriodicSweep({ ...options, run: () => this.sweepOnce() });
  }

  /** False when configured off (e.g. a retention of 0): `start()` then does nothing. */
  get enabled(): boolean {
    return true;
  }

  /** Sweeps soon and then every interval. */
  start(): void {
    if (this.enabled) this.loop.start();
  }

  /** Stops the timer and waits for a sweep in progress. Idempotent. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One sweep (one at a time per instance); resolves with how many rows it handled. */
  sweep(): Promise<number> {
    return this.loop.sweep();
  }

  /** What one sweep does. */
  protected abstract sweepOnce(): Promise<number>;
}
