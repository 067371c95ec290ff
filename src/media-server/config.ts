/**
 * The media server's own variables (`ROOMS_MEDIA_*` of the server), declared once: the
 * standalone server (`npm run start:media`, ./main.ts) reads them with
 * {@link loadMediaServerConfig}, and the rooms node (src/main/config.ts) merges the same
 * shape, rules and mapping into its own schema for the embedded server. Nothing here reads a
 * variable of the rooms node, so a media server starts whatever the node's settings are.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import {
  deepFreeze,
  defaultNodeId,
  int,
  logLevelVariable,
  nodeIdVariable,
  parseEnv,
} from '../shared/env.js';
import {
  DEFAULT_EDGE_LINGER_MS,
  DEFAULT_PEER_LOST_MS,
  DEFAULT_ROUTER_CONSUMERS,
  type MediaServerOptions,
} from './options.js';
import type { MediaRegistrationSettings } from './registration.js';

/** Every variable of a media server, its default and its check (docs/configuration.md's table mirrors it). */
export const mediaServerVariables = {
  ROOMS_MEDIA_HOST: z.string().min(1).default('127.0.0.1'),
  ROOMS_MEDIA_PORT: int(0, 65535).default(7070),
  ROOMS_MEDIA_INTERNAL_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  ROOMS_MEDIA_WORKERS: int(1, 64).optional(),
  ROOMS_MEDIA_WORKER_BIN: z.string().min(1).optional(),
  ROOMS_MEDIA_LISTEN_IP: z.union([z.ipv4(), z.ipv6()]).default('127.0.0.1'),
  ROOMS_MEDIA_ANNOUNCED_ADDRESS: z
    .string()
    .regex(/^[A-Za-z0-9.:-]{1,253}$/, 'an IP address or a host name')
    .optional(),
  ROOMS_MEDIA_RTC_MIN_PORT: int(1024, 65535).default(40000),
  ROOMS_MEDIA_RTC_MAX_PORT: int(1024, 65535).default(49999),
  ROOMS_MEDIA_WEBRTC_SERVER_PORT: int(1024, 65535).optional(),
  ROOMS_MEDIA_ROUTER_CONSUMERS: int(1, 1_000_000).default(DEFAULT_ROUTER_CONSUMERS),
  ROOMS_MEDIA_EDGE_LINGER_MS: int(0, 3_600_000).default(DEFAULT_EDGE_LINGER_MS),
  ROOMS_MEDIA_PIPE_LISTEN_IP: z.union([z.ipv4(), z.ipv6()]).optional(),
  ROOMS_MEDIA_PIPE_ANNOUNCED_ADDRESS: z
    .string()
    .regex(/^[A-Za-z0-9.:-]{1,253}$/, 'an IP address or a host name')
    .optional(),
  ROOMS_MEDIA_PEER_LOST_MS: int(500, 600_000).default(DEFAULT_PEER_LOST_MS),
  ROOMS_MEDIA_RECORDINGS_DIR: z.string().min(1).default('data/recordings'),
  ROOMS_MEDIA_FFMPEG: z.string().min(1).default('ffmpeg'),
  ROOMS_MEDIA_RECORDING_RETENTION_MS: int(0, 3_650 * 86_400_000).default(30 * 86_400_000),
};

/**
 * How a media server joins the cluster's directory (src/media-server/registration.ts); the
 * embedded server of a node reads these two too (its Redis is the node's).
 */
export const mediaRegistrationVariables = {
  ROOMS_MEDIA_ADVERTISE_URL: z
    .string()
    .regex(/^https?:\/\/[^\s/]+\/?$/, 'http://host:port the nodes reach the internal API at')
    .optional(),
  ROOMS_MEDIA_REGISTRATION_TTL_MS: int(1_000, 60_000).default(3_000),
};

/** The id rooms record for a media server: letters, digits and . _ : - (1-64). */
export const mediaServerIdVariable = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,64}$/, 'letters, digits and . _ : - (1-64)');

/** A media server's settings but its token (the embedded one may make up its own). */
export type MediaServerSettings = Omit<MediaServerOptions, 'internalToken'>;

/** The parsed variables (also a part of the rooms node's parsed environment). */
export type MediaServerEnv = z.infer<z.ZodObject<typeof mediaServerVariables>>;

const workersOf = (e: MediaServerEnv) => e.ROOMS_MEDIA_WORKERS ?? availableParallelism();

/** The media server's settings that only make sense together. */
export function mediaServerRules(e: MediaServerEnv, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message });
  if (e.ROOMS_MEDIA_RTC_MIN_PORT > e.ROOMS_MEDIA_RTC_MAX_PORT) {
    issue('ROOMS_MEDIA_RTC_MIN_PORT', 'must not exceed ROOMS_MEDIA_RTC_MAX_PORT');
  }
  const workers = workersOf(e);
  if (e.ROOMS_MEDIA_WEBRTC_SERVER_PORT && e.ROOMS_MEDIA_WEBRTC_SERVER_PORT + workers > 65536) {
    issue('ROOMS_MEDIA_WEBRTC_SERVER_PORT', `needs ${workers} ports (one per worker) up to 65535`);
  }
}

/** The parsed variables as {@link MediaServerOptions}; the token is the caller's business. */
export function mediaServerOptions(e: MediaServerEnv): MediaServerSettings {
  return {
    host: e.ROOMS_MEDIA_HOST,
    port: e.ROOMS_MEDIA_PORT,
    workers: workersOf(e),
    workerBin: e.ROOMS_MEDIA_WORKER_BIN ?? null,
    listenIp: e.ROOMS_MEDIA_LISTEN_IP,
    announcedAddress: e.ROOMS_MEDIA_ANNOUNCED_ADDRESS ?? null,
    rtcMinPort: e.ROOMS_MEDIA_RTC_MIN_PORT,
    rtcMaxPort: e.ROOMS_MEDIA_RTC_MAX_PORT,
    webRtcServerPort: e.ROOMS_MEDIA_WEBRTC_SERVER_PORT ?? null,
    workerLogLevel: 'warn',
    routerConsumers: e.ROOMS_MEDIA_ROUTER_CONSUMERS,
    edgeLingerMs: e.ROOMS_MEDIA_EDGE_LINGER_MS,
    pipeListenIp: e.ROOMS_MEDIA_PIPE_LISTEN_IP ?? null,
    pipeAnnouncedAddress: e.ROOMS_MEDIA_PIPE_ANNOUNCED_ADDRESS ?? null,
    peerLostMs: e.ROOMS_MEDIA_PEER_LOST_MS,
    recordings: {
      dir: e.ROOMS_MEDIA_RECORDINGS_DIR,
      ffmpeg: e.ROOMS_MEDIA_FFMPEG,
      retentionMs: e.ROOMS_MEDIA_RECORDING_RETENTION_MS,
    },
  };
}

/** What `npm run start:media` runs with. */
export interface MediaServerConfig {
  /** `ROOMS_NODE_ID`, else `<hostname>-<ROOMS_MEDIA_PORT>`; logs name the process `<id>-media`. */
  readonly nodeId: string;
  readonly logLevel: string;
  readonly server: MediaServerOptions;
  /** Its registration in the cluster's directory; null without `ROOMS_MEDIA_REDIS_URL`. */
  readonly registration: MediaRegistrationSettings | null;
  /** SIGTERM drains: the server exits once its rooms are gone, or after this long. */
  readonly drainTimeoutMs: number;
}

const standaloneSchema = z
  .object({
    ROOMS_NODE_ID: nodeIdVariable,
    ROOMS_LOG_LEVEL: logLevelVariable,
    ...mediaServerVariables,
    ...mediaRegistrationVariables,
    ROOMS_MEDIA_SERVER_ID: mediaServerIdVariable.default('media-1'),
    ROOMS_MEDIA_REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL')
      .optional(),
    ROOMS_KEY_PREFIX: z.string().default('rooms:'),
    ROOMS_MEDIA_DRAIN_TIMEOUT_MS: int(0, 86_400_000).default(60_000),
  })
  .superRefine((e, ctx) => {
    mediaServerRules(e, ctx);
    // A standalone server is reached by other processes: they must share the token.
    if (!e.ROOMS_MEDIA_INTERNAL_TOKEN) {
      const message = 'required for a standalone media server';
      ctx.addIssue({ code: 'custom', path: ['ROOMS_MEDIA_INTERNAL_TOKEN'], message });
    }
  });

/**
 * The standalone media server's configuration from `env`. Throws a ConfigError (one line
 * per bad variable) on a bad value or a missing `ROOMS_MEDIA_INTERNAL_TOKEN`.
 */
export function loadMediaServerConfig(env: NodeJS.ProcessEnv): MediaServerConfig {
  const e = parseEnv(standaloneSchema, env);
  // parseEnv only returns once the rule above has seen the token.
  const internalToken = e.ROOMS_MEDIA_INTERNAL_TOKEN ?? '';
  return deepFreeze({
    nodeId: e.ROOMS_NODE_ID ?? defaultNodeId(e.ROOMS_MEDIA_PORT),
    logLevel: e.ROOMS_LOG_LEVEL,
    server: { ...mediaServerOptions(e), internalToken },
    registration: e.ROOMS_MEDIA_REDIS_URL
      ? {
          id: e.ROOMS_MEDIA_SERVER_ID,
          redisUrl: e.ROOMS_MEDIA_REDIS_URL,
          keyPrefix: e.ROOMS_KEY_PREFIX,
          advertiseUrl: e.ROOMS_MEDIA_ADVERTISE_URL ?? null,
          ttlMs: e.ROOMS_MEDIA_REGISTRATION_TTL_MS,
        }
      : null,
    drainTimeoutMs: e.ROOMS_MEDIA_DRAIN_TIMEOUT_MS,
  });
}
