/**
 * The only place that reads the environment. Produces one typed, validated, frozen
 * object; a bad value is a startup error naming the variable.
 */
import { hostname } from 'node:os';
import { z } from 'zod';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max);

/** Every `ROOMS_*` variable, its default and its meaning (the README table mirrors this). */
const schema = z.object({
  ROOMS_NODE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, dot, dash or underscore (1-64)')
    .optional(),
  ROOMS_ADVERTISE_ADDR: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/, 'host:port of this instance')
    .refine((v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'port must be at most 65535')
    .optional(),
  ROOMS_HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  ROOMS_HTTP_PORT: int(0, 65535).default(8080),
  ROOMS_GRPC_PORT: int(0, 65535).default(9090),
  ROOMS_DB_URL: z
    .string()
    .min(1)
    .refine((v) => !/^[a-z]+:\/\//i.test(v) || /^(mysql|sqlite):\/\//i.test(v), {
      message: 'mysql://user:pass@host:port/db, or a SQLite file path',
    })
    .default('./data/rooms.sqlite'),
  ROOMS_DB_POOL_SIZE: int(1, 1000).default(10),
  ROOMS_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'redis://host:port[/db]')
    .optional(),
  ROOMS_KEY_PREFIX: z.string().default('rooms:'),
  ROOMS_LEASE_TTL_MS: int(300).default(10_000),
  ROOMS_SNAPSHOT_EVERY: int(1).default(100),
  ROOMS_MAX_BATCH: int(1, 1000).default(256),
  ROOMS_IDLE_AFTER_MS: int(1000).default(300_000),
  ROOMS_TIMER_TICK_MS: int(10).default(250),
  ROOMS_SWEEP_INTERVAL_MS: int(100).default(2_000),
  ROOMS_DRAIN_TIMEOUT_MS: int(100).default(15_000),
  ROOMS_LOG_LEVEL: z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
    .default('info'),
});

export interface Config {
  readonly nodeId: string;
  readonly advertiseAddr: string;
  readonly http: { readonly host: string; readonly port: number };
  readonly grpcPort: number;
  readonly db: { readonly url: string; readonly poolSize: number };
  /** Unset: in-memory lease, registry and bus (a single node). */
  readonly redisUrl: string | null;
  readonly keyPrefix: string;
  readonly cell: {
    readonly leaseTtlMs: number;
    readonly snapshotEvery: number;
    readonly maxBatch: number;
    readonly idleAfterMs: number;
    readonly timerTickMs: number;
    readonly sweepIntervalMs: number;
    readonly drainTimeoutMs: number;
  };
  readonly logLevel: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = schema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('ROOMS_') && v !== '')),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return deepFreeze({
    nodeId:
      e.ROOMS_NODE_ID ??
      `${hostname()
        .replace(/[^A-Za-z0-9._-]/g, '-')
        .slice(0, 50)}-${e.ROOMS_HTTP_PORT}`,
    advertiseAddr: e.ROOMS_ADVERTISE_ADDR ?? `127.0.0.1:${e.ROOMS_GRPC_PORT}`,
    http: { host: e.ROOMS_HTTP_HOST, port: e.ROOMS_HTTP_PORT },
    grpcPort: e.ROOMS_GRPC_PORT,
    db: { url: e.ROOMS_DB_URL, poolSize: e.ROOMS_DB_POOL_SIZE },
    redisUrl: e.ROOMS_REDIS_URL ?? null,
    keyPrefix: e.ROOMS_KEY_PREFIX,
    cell: {
      leaseTtlMs: e.ROOMS_LEASE_TTL_MS,
      snapshotEvery: e.ROOMS_SNAPSHOT_EVERY,
      maxBatch: e.ROOMS_MAX_BATCH,
      idleAfterMs: e.ROOMS_IDLE_AFTER_MS,
      timerTickMs: e.ROOMS_TIMER_TICK_MS,
      sweepIntervalMs: e.ROOMS_SWEEP_INTERVAL_MS,
      drainTimeoutMs: e.ROOMS_DRAIN_TIMEOUT_MS,
    },
    logLevel: e.ROOMS_LOG_LEVEL,
  });
}

function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (v && typeof v === 'object') deepFreeze(v as object);
  return Object.freeze(value);
}
