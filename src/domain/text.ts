/**
 * Pure checks of user-given display text (nicknames, room titles), shared by the input
 * rules of several modules so that they agree on what a clean display text is.
 */

/** A media server id (the media directory's key): short, printable, no spaces. */
export function isMediaServerId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9._:-]{1,64}$/.test(value);
}

/** Control characters (Unicode Cc: C0, DEL, C1; newlines, NUL, …) have no place in one. */
export function hasControlCharacters(value: string): boolean {
  return /\p{Cc}/u.test(value);
}

/**
 * A lone (unpaired) UTF-16 surrogate: the string is not valid Unicode, has no UTF-8 form,
 * and a database or a client would reject or mangle it.
 */
export function hasLoneSurrogate(value: string): boolean {
  // With the `u` flag a well-formed pair is one code point; only unpaired halves are Cs.
  return /\p{Cs}/u.test(value);
}
