/**
 * The one user id of the API: an account's id. JSON carries it as a number (REST bodies and
 * answers, `/ws` payloads and frames, in meetings and voice rooms alike); text carries it in
 * decimal (a token's `sub`, the gRPC API's string fields, the rooms' own state and keys).
 * At most 15 digits, so every id is a safe integer in any JSON parser.
 */
import { z } from 'zod';

/** The decimal form: no sign, no leading zero, 1-15 digits. */
export const USER_ID_TEXT = /^[1-9][0-9]{0,14}$/;
const MAX_USER_ID = 999_999_999_999_999;

/** A user id in text (gRPC, a forwarded call, the rooms' state). */
export const UserIdText = z
  .string()
  .regex(USER_ID_TEXT, 'a user id: an account id in decimal (1-15 digits)');

/** A user id in JSON: a number, never a string. */
export const JsonUserId = z
  .int()
  .min(1)
  .max(MAX_USER_ID)
  .describe('A user id: the account id, a JSON integer');

export function isUserIdText(id: unknown): id is string {
  return typeof id === 'string' && USER_ID_TEXT.test(id);
}

/** The JSON form of a user id kept in text. */
export function userIdJson(id: string): number {
  return Number(id);
}

/** The text form of a user id received in JSON. */
export function userIdText(id: number): string {
  return String(id);
}
