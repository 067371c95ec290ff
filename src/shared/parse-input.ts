/**
 * Input checked by a zod schema, the one way every edge refuses it: the code's error (by
 * default INVALID_ARGUMENT) naming the first failing field as `path: rule`, or the rule alone
 * when the whole value fails (e.g. an unknown key of a strict object). One field at a time
 * keeps the answer short and as the contract shows it (`参数错误: <field>: <rule>`).
 */
import type { z } from 'zod';
import { errors, type ErrorCode } from './error-codes.js';

/** The first issue of a failed parse as an answer names it. */
export function firstIssueText(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid input';
  return issue.path.length > 0
    ? `${issue.path.map(String).join('.')}: ${issue.message}`
    : issue.message;
}

/** `value` as `schema` reads it, or `code`'s error naming the first failing field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  code: ErrorCode = errors.INVALID_ARGUMENT,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw code(firstIssueText(parsed.error));
}
