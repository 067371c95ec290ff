/**
 * Input rules of the accounts API. Each parser returns clean values or throws
 * `AppError('validation', …)`; nothing here touches the database.
 */
import { z } from 'zod';
import {
  DISGUISING_CHARACTERS,
  hasControlCharacters,
  hasDisguisingCharacters,
} from '../domain/text.js';
import { errors } from '../shared/error-codes.js';
import { parseInput } from '../shared/parse-input.js';

/** The app a user belongs to when a request names none. */
export const DEFAULT_APP_CODE = 'default';

export const APP_CODE_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{3,32}$/;
/** bcrypt reads at most 72 bytes: a longer password would be silently truncated. */
export const PASSWORD_MAX_BYTES = 72;

export interface RegisterInput {
  readonly username: string;
  readonly password: string;
  /** Absent: the username. */
  readonly nickname: string | null;
  /** Absent: none (stored as an empty string). */
  readonly avatar: string | null;
}

export interface LoginInput {
  readonly username: string;
  readonly password: string;
}

// 72 bytes is also at most 72 characters; the byte rule only bites on non-ASCII passwords.
const password = z
  .string()
  .refine((v) => [...v].length >= 6, 'must be 6-72 characters')
  .refine(
    (v) => Buffer.byteLength(v, 'utf8') <= PASSWORD_MAX_BYTES,
    `must be at most ${PASSWORD_MAX_BYTES} bytes in UTF-8`,
  );

/** Exported for the API's documentation (src/edge/http/auth-routes.ts). */
export const registerSchema = z.object({
  username: z.string().regex(USERNAME_PATTERN, '3-32 letters, digits, dot, dash or underscore'),
  password,
  nickname: z
    .string()
    .trim()
    .max(64, 'at most 64 characters')
    // Control characters (newlines, NUL, …) have no place in a display name.
    .refine((v) => !hasControlCharacters(v), 'must not contain control characters')
    .refine((v) => !hasDisguisingCharacters(v), DISGUISING_CHARACTERS)
    .nullish(),
  avatar: z
    .string()
    .trim()
    .max(512, 'at most 512 characters')
    .refine((v) => v === '' || isHttpUrl(v), 'must be an http(s) URL')
    .nullish(),
});

// Login only rejects what cannot be a request at all; a well-formed but impossible pair
// (bad pattern, too long) is simply a wrong username or password.
export const loginSchema = z.object({
  username: z.string().min(1).max(256),
  password: z.string().min(1).max(1024),
});

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  return parseInput(schema, body ?? {}, errors.VALIDATION);
}

/** Validates a register body. */
export function parseRegisterInput(body: unknown): RegisterInput {
  const v = parse(registerSchema, body);
  return {
    username: v.username,
    password: v.password,
    nickname: v.nickname ? v.nickname : null,
    avatar: v.avatar ? v.avatar : null,
  };
}

/** Validates a login body (shape only: see the comment on the schema). */
export function parseLoginInput(body: unknown): LoginInput {
  return parse(loginSchema, body);
}

/**
 * The app named by an `X-App-Code` header value: absent means {@link DEFAULT_APP_CODE};
 * present, it must match `[a-z0-9_-]{1,64}` (a repeated header is refused).
 */
export function parseAppCode(header: string | string[] | undefined): string {
  if (header === undefined) return DEFAULT_APP_CODE;
  if (typeof header !== 'string' || !APP_CODE_PATTERN.test(header)) {
    throw errors.INVALID_APP_CODE();
  }
  return header;
}

/**
 * The key usernames are unique by, within an app: usernames are case-insensitive
 * (`Alice` and `alice` are one account), while the spelling chosen at registration is
 * kept for display. The allowed characters are ASCII, so lower-casing is locale-free.
 */
export function usernameKey(username: string): string {
  return username.toLowerCase();
}

/** At most this many ids in one `GET /api/v1/users?ids=` (one indexed query, one page). */
export const MAX_USER_LOOKUP = 100;

const USER_ID = /^[1-9]\d{0,15}$/;

/**
 * The ids of a user lookup: `ids=1,2,3` (a repeated `ids` parameter is read as one list),
 * each a positive decimal integer up to 2^53 - 1, at least one and at most
 * {@link MAX_USER_LOOKUP} after removing repeats.
 */
export function parseUserIds(raw: unknown): number[] {
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  if (typeof text !== 'string' || text.trim() === '') {
    throw errors.VALIDATION('ids: required, comma-separated user ids');
  }
  const parts = text.split(',').map((p) => p.trim());
  const ids = parts.map(Number);
  if (parts.some((p, i) => !USER_ID.test(p) || !Number.isSafeInteger(ids[i]))) {
    throw errors.VALIDATION('ids: each id must be a positive integer');
  }
  const unique = [...new Set(ids)];
  if (unique.length > MAX_USER_LOOKUP) {
    throw errors.VALIDATION(`ids: at most ${MAX_USER_LOOKUP} ids`);
  }
  return unique;
}
