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
 * Invisible characters that disguise a display text: bidirectional overrides, embeddings and
 * isolates (U+202A–U+202E, U+2066–U+2069) make it read differently from what it is, and
 * zero-width characters (U+200B, U+2060–U+2064, U+180E, U+FEFF) make two different texts look
 * the same. The joiners (U+200C, U+200D: emoji sequences, Persian and Indic scripts) and the
 * direction marks (U+200E, U+200F, U+061C) are kept: real text needs them and they reorder
 * nothing beyond themselves.
 */
export function hasDisguisingCharacters(value: string): boolean {
  return /[\u202A-\u202E\u2066-\u2069\u200B\u2060-\u2064\u180E\uFEFF]/u.test(value);
}

/** The refusal text of {@link hasDisguisingCharacters}, the same for every display text. */
export const DISGUISING_CHARACTERS =
  'must not contain direction overrides or zero-width characters';

/**
 * A lone (unpaired) UTF-16 surrogate: the string is not valid Unicode, has no UTF-8 form,
 * and a database or a client would reject or mangle it.
 */
export function hasLoneSurrogate(value: string): boolean {
  // With the `u` flag a well-formed pair is one code point; only unpaired halves are Cs.
  return /\p{Cs}/u.test(value);
}
