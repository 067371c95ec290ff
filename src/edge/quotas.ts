/**
 * Per-user creation quotas, for any kind of resource (voice rooms now, meetings later): at
 * most `rate.limit` creations per `rate.windowMs` (shared across nodes through the
 * {@link RateLimiter}), and at most `maxOpen` open resources per owner at once (counted by
 * a function the wiring passes in, e.g. from the `rooms` projection).
 *
 * Only creations count: a caller takes a ticket before creating and refunds it when the
 * attempt created nothing (a failure, or a retry that returned the first result). The open
 * count is read before each creation, so concurrent creations at the limit may pass it by
 * their number (the rate limit bounds how many that can be).
 */
import type { RateLimiter, RateRule } from '../shared/rate-limiter.js';
import { errors } from '../shared/error-codes.js';

export interface CreationQuotaOptions {
  /** Names the counters (`quota:<kind>:…`), e.g. `voice_room`, `meeting`. */
  readonly kind: string;
  /** What the messages call it, e.g. `房间`. */
  readonly label: string;
  /** Creations per owner per window; limit 0: no rate limit. */
  readonly rate: RateRule;
  /** Open resources per owner; 0: no limit. */
  readonly maxOpen: number;
  /** The owner's open (not closed) resources now. */
  readonly countOpen: (appCode: string, ownerId: string) => Promise<number>;
}

/** An admitted creation; `refund()` gives its place back when nothing was created. */
export interface CreationTicket {
  refund(): Promise<void>;
}

const NOTHING_TO_REFUND: CreationTicket = { refund: () => Promise.resolve() };

export class CreationQuota {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly options: CreationQuotaOptions,
  ) {}

  /**
   * Admits one creation by `ownerId`.
   * @throws AppError `conflict` (409, `TOO_MANY_OPEN_ROOMS`) at the open limit;
   * RateLimitedError (429, `CREATE_RATE_LIMITED`) past the rate.
   */
  async admit(appCode: string, ownerId: string): Promise<CreationTicket> {
    const { label, maxOpen, rate } = this.options;
    if (maxOpen > 0 && (await this.options.countOpen(appCode, ownerId)) >= maxOpen) {
      throw errors.TOO_MANY_OPEN_ROOMS(label, maxOpen, label);
    }
    if (rate.limit <= 0) return NOTHING_TO_REFUND;
    const key = `quota:${this.options.kind}:${appCode}:${ownerId}`;
    const state = await this.limiter.hit(key, rate.windowMs);
    if (state.count > rate.limit) {
      await this.limiter.undo(key); // a refused attempt uses up nothing
      const seconds = Math.max(1, Math.ceil(state.resetInMs / 1000));
      throw errors.CREATE_RATE_LIMITED.after(state.resetInMs, label, seconds);
    }
    return { refund: () => this.limiter.undo(key) };
  }
}
