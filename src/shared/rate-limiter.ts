/**
 * Port: counters of what one caller did in a time window (failed logins, room creations),
 * shared by every node of a cluster (Redis) or kept in this process (embedded). The policy
 * (which key, what limit) belongs to the caller; this only counts.
 *
 * Windows are fixed: a key's window starts at its first hit and lasts `windowMs`; the counter
 * and the window end together. So a caller gets at most `limit` in any window that starts
 * with a hit, and at most twice that across the edge of two windows.
 */
export interface RateLimiter {
  /**
   * Adds `amount` (default 1) to `key`, opening a window of `windowMs` if none is open; the
   * state after. An amount counts things one request asks for at once (e.g. invitees).
   */
  hit(key: string, windowMs: number, amount?: number): Promise<RateCount>;
  /** The state of `key` without counting; `{count: 0, resetInMs: 0}` when no window is open. */
  peek(key: string): Promise<RateCount>;
  /** Takes `amount` (default 1) back (it turned out not to count), never below zero; the window stays. */
  undo(key: string, amount?: number): Promise<void>;
  /** Forgets `key` and its window. */
  reset(key: string): Promise<void>;
}

export interface RateCount {
  readonly count: number;
  /** Time left in the key's window (0 when none is open). */
  readonly resetInMs: number;
}

/** A limit and the window it counts in, e.g. 30 per 60 000 ms. A limit of 0 turns it off. */
export interface RateRule {
  readonly limit: number;
  readonly windowMs: number;
}
