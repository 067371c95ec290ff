/**
 * Every call of a room kind's API answers what its declaration says: the answer, its own or
 * a forwarded owner's, is parsed with the declared reply schema. What a caller gets is then
 * the schema's type, and the OpenAPI document, made from the same schema, shows exactly what
 * is sent. An answer that does not match is a bug, refused as such instead of sent.
 */
import type { z } from 'zod';
import { errors } from '../shared/error-codes.js';

export function declaredReply<S extends z.ZodType>(
  schema: S,
  method: string,
  answer: unknown,
): z.output<S> {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : '(the whole answer)';
  throw errors.REPLY_MISMATCH(method, `${where}: ${issue?.message ?? 'invalid'}`);
}
