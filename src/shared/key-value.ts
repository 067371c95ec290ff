/**
 * Port: short-lived string values shared by every node (Redis in a cluster) or kept in this
 * process (embedded): the meeting's password lockout counters, its invite tokens and the
 * outcomes of invite requests.
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
  /**
   * Sets the value only when the key is absent (or expired), with a TTL of `ttlMs`.
   * Returns true when this call set it: of several racing calls exactly one wins.
   */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * The value (null when absent or expired), and in the same step the key's TTL lowered to
   * at most `maxTtlMs` from now (a shorter remaining TTL is kept, never lengthened).
   */
  getCappingTtl(key: string, maxTtlMs: number): Promise<string | null>;
}
