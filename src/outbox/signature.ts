/**
 * Webhook signatures: `X-Rooms-Signature: sha256=<hex>`, the HMAC-SHA256 of the raw request
 * body with the app's webhook secret. A consumer verifies against the bytes it received,
 * before parsing them (re-serialised JSON need not match byte for byte).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-rooms-signature';
const PREFIX = 'sha256=';

/** The header value for `rawBody` signed with `secret`. */
export function signWebhookBody(secret: string, rawBody: string | Buffer): string {
  return PREFIX + createHmac('sha256', secret).update(rawBody).digest('hex');
}

/**
 * Consumer side: true only when `header` is the signature of exactly `rawBody` under
 * `secret`. Compares in constant time; a missing or malformed header is false.
 */
export function verifyWebhookSignature(
  secret: string,
  rawBody: string | Buffer,
  header: string | string[] | undefined,
): boolean {
  if (typeof header !== 'string' || !header.startsWith(PREFIX)) return false;
  const given = Buffer.from(header.slice(PREFIX.length), 'hex');
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
