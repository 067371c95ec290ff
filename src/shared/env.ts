/**
 * Reading `ROOMS_*` variables, shared by the rooms node (src/main/config.ts) and the
 * standalone media server (src/media-server/config.ts): the value helpers, the variables both
 * read, and one way to parse and report. A bad value is a {@link ConfigError} naming the
 * variable; an empty variable counts as unset.
 */
import { hostname } from 'node:os';
import { z } from 'zod';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max);
export const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** `ROOMS_NODE_ID`: names the process in logs (and, for a node, in the cluster). */
export const nodeIdVariable = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, dot, dash or underscore (1-64)')
  .optional();

export const logLevelVariable = z
  .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
  .default('info');

/** `<hostname>-<port>` with the host name cut to what `ROOMS_NODE_ID` allows. */
export function defaultNodeId(port: number): string {
  return `${hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 50)}-${port}`;
}

/**
 * Parses the `ROOMS_*` variables of `env` (others, and empty ones, are left out) with
 * `schema`; every issue becomes one `VARIABLE: message` line of a ConfigError.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const parsed = schema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('ROOMS_') && v !== '')),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return parsed.data;
}

export function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (v && typeof v === 'object') deepFreeze(v as object);
  return Object.freeze(value);
}
