/** When a failed delivery is tried again, and when the relay gives up. Pure. */

export interface RetryPolicy {
  /** Delay before attempt 2; doubles every attempt after. */
  readonly baseMs: number;
  /** Longest delay between two attempts. */
  readonly maxMs: number;
  /** Attempts (including the first) after which a retryable failure becomes failed. */
  readonly maxAttempts: number;
}

/**
 * Delay after the `attempts`-th failed attempt: exponential, capped, with "equal jitter"
 * (a uniform draw in the upper half) so that events which failed together (a sink that
 * was down) do not all come back in the same millisecond, yet never retry much earlier
 * than the curve says.
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random = Math.random): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 52);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** True when an event that has now failed `attempts` times must not be tried again. */
export function exhausted(policy: RetryPolicy, attempts: number): boolean {
  return attempts >= policy.maxAttempts;
}
