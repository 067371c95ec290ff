/**
 * Comparing a presented secret (a token from a header, a signature) with the expected one.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string | Buffer): Buffer => createHash('sha256').update(value).digest();

/**
 * True when `given` is exactly `expected`. Both sides are hashed first, so the comparison
 * always runs over two 32-byte digests: its time reveals neither the matching prefix nor the
 * expected length, and a value of any length or encoding (non-ASCII, empty) is simply
 * unequal instead of making `timingSafeEqual` throw. Anything that is not a string or a
 * buffer (a missing or repeated header) is unequal; so is everything when nothing (or an
 * empty secret) is expected: an unset secret refuses all callers.
 */
export function secretEquals(
  given: unknown,
  expected: string | Buffer | null | undefined,
): boolean {
  if (expected === null || expected === undefined || expected.length === 0) return false;
  if (typeof given !== 'string' && !Buffer.isBuffer(given)) return false;
  return timingSafeEqual(digest(given), digest(expected));
}
