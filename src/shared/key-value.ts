/**
 * Port: short-lived string values shared by every node (Redis in a cluster) or kept in this
 * process (embedded): the meeting's password lockout counters, later its invite tokens.
 * Every operation is atomic on its key; a key past its TTL reads as absent.
 */
export interface KeyValue {
  /** The value, or null when the key is absent or expired. */
  get(key: string): Promise<string | null>;
  /** Sets the value; it expires `ttlMs` from now. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Removes the key (absent: nothing happens). */
  del(key: string): Promise<void>;
  /**
   * Adds one to the key's integer value (an absent key counts from 0) and (re)sets its TTL
   * to `ttlMs` from now: a counter that lives `ttlMs` after its last increment. Returns the
   * value after the increment.
   */
  incr(key: string, ttlMs: number): Promise<number>;
}
