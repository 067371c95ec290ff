/**
 * Reads a rooms node's environment (the standalone media server: src/media-server/config.ts)
 * into one typed, validated, frozen object; a bad value is a startup error naming the variable.
 */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import {
  mediaRegistrationVariables,
  mediaServerIdVariable,
  mediaServerOptions,
  mediaServerRules,
  mediaServerVariables,
  type MediaServerSettings,
} from '../media-server/config.js';
import type { RateRule } from '../shared/rate-limiter.js';
import { DEFAULT_MEDIA_CAPS, type MediaCaps } from '../edge/room-media/media-admission.js';
import { DestinationPolicy } from '../outbox/destinations.js';
import {
  deepFreeze,
  defaultNodeId,
  flag,
  int,
  logLevelVariable,
  nodeIdVariable,
  parseEnv,
} from '../shared/env.js';
import { ALL_ROLES, roleRules, rolesVariable, type NodeRoles } from './roles.js';

export { ConfigError } from '../shared/env.js';

/** Fastify's `trustProxy`: false, true, a hop count, or addresses/CIDRs of the proxies. */
const trustProxy = z
  .string()
  .refine(
    (v) =>
      /^(true|false|\d{1,2})$/.test(v) ||
      v.split(',').every((p) => isIP(p.trim().split('/')[0] ?? '') !== 0),
    'false, true, a hop count, or comma-separated proxy IPs/CIDRs',
  )
  .transform((v): boolean | number | string =>
    v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v,
  );

/** Every `ROOMS_*` variable, its default and its meaning (docs/configuration.md's table mirrors this). */
const schema = z.object({
  ROOMS_NODE_ID: nodeIdVariable,
  ROOMS_ROLES: rolesVariable.default(ALL_ROLES),
  ROOMS_CELLS_ADDR: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/, 'host:port of the room-service (cells) load balancer')
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
  ROOMS_COMMAND_LOG_RETENTION_MS: int(0).default(604_800_000),
  ROOMS_REQUEST_ID_RETENTION_MS: int(0).default(604_800_000),
  ROOMS_IDLE_AFTER_MS: int(1000).default(300_000),
  ROOMS_TIMER_TICK_MS: int(10).default(250),
  ROOMS_SWEEP_INTERVAL_MS: int(100).default(2_000),
  ROOMS_DRAIN_TIMEOUT_MS: int(100).default(15_000),
  ROOMS_JWT_SECRET: z
    .string()
    .refine((v) => Buffer.byteLength(v, 'utf8') >= 32, 'at least 32 bytes')
    .optional(),
  ROOMS_JWT_TTL_S: int(60, 31_536_000).default(604_800),
  ROOMS_BCRYPT_COST: int(4, 15).default(10),
  ROOMS_GRPC_HOST: z.string().min(1).default('127.0.0.1'),
  ROOMS_GRPC_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{32,1024}$/, 'at least 32 printable ASCII characters, no spaces')
    .optional(),
  ROOMS_GRPC_TLS_CERT: z.string().min(1).optional(),
  ROOMS_GRPC_TLS_KEY: z.string().min(1).optional(),
  ROOMS_GRPC_TLS_CA: z.string().min(1).optional(),
  ROOMS_FORWARD_TIMEOUT_MS: int(100).default(5_000),
  ROOMS_PRESENCE_TIMEOUT_MS: int(1000).default(60_000),
  ROOMS_PUBLISH_TIMEOUT_MS: int(1000).default(15_000),
  ROOMS_MAX_SEATS: int(1, 50).default(20),
  ROOMS_MEETING_EMPTY_TTL_MS: int(1000).default(300_000),
  ROOMS_MEETING_HOST_GRACE_MS: int(1000).default(30_000),
  ROOMS_MEETING_PRESENCE_TTL_MS: int(1000).default(90_000),
  ROOMS_MEETING_STALE_MS: int(60_000).default(14_400_000),
  // A sweep skips meetings it has already covered, so the line must lie well behind any
  // end still being committed: 0 (off) or at least a minute.
  ROOMS_MEETING_CHAT_RETENTION_MS: int(0)
    .refine((v) => v === 0 || v >= 60_000, '0 or at least 60000')
    .default(86_400_000),
  // A notification outlives the invite token it carries (600 s) and the invite's retries.
  ROOMS_NOTIFICATION_RETENTION_MS: int(0)
    .refine((v) => v === 0 || v >= 3_600_000, '0 or at least 3600000')
    .default(2_592_000_000),
  ROOMS_NOTIFICATION_MAX_PER_USER: int(0, 1_000_000).default(1_000),
  ROOMS_ADMIN_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  ROOMS_TRTC_APPS: z
    .string()
    .regex(
      /^\s*\d+:[a-z0-9_-]{1,64}:[^,\s]+(\s*,\s*\d+:[a-z0-9_-]{1,64}:[^,\s]+)*\s*$/,
      'sdkAppId:app_code:callback_key[,…]',
    )
    .optional(),
  ROOMS_VOICE_MEDIA_CHECK_MS: int(100, 3_600_000).default(10_000),
  ROOMS_MEDIA_EMBEDDED: flag.default(true),
  ROOMS_MEDIA_URL: z
    .string()
    .regex(/^https?:\/\/[^\s/]+\/?$/, 'http://host:port of a media server')
    .optional(),
  // The media server's own variables (ROOMS_MEDIA_HOST, _PORT, _INTERNAL_TOKEN, _WORKERS…).
  ...mediaServerVariables,
  // The id rooms record for this media server (every node of a cluster names a shared one
  // alike). Unset: `media-1` for a separate server, `<node id>-media` for an embedded one
  // (each node's own: another node must not take it for its own embedded server).
  ROOMS_MEDIA_SERVER_ID: mediaServerIdVariable.optional(),
  // With ROOMS_REDIS_URL and a shared ROOMS_MEDIA_INTERNAL_TOKEN the embedded server joins
  // the cluster's media directory (its URL as the others reach it, its record's TTL).
  ...mediaRegistrationVariables,
  ROOMS_MEDIA_TIMEOUT_MS: int(100, 120_000).default(5_000),
  ROOMS_MEDIA_HOLDER_TTL_MS: int(1_000, 600_000).default(15_000),
  ROOMS_MEDIA_CLOSE_RETRY: int(0, 10).default(2),
  // What one user may hold in one room (counted on the shared records), and one socket.
  ROOMS_MEDIA_USER_MAX_TRANSPORTS: int(2, 1000).default(DEFAULT_MEDIA_CAPS.perUser.transports),
  ROOMS_MEDIA_USER_MAX_PRODUCERS: int(1, 1000).default(DEFAULT_MEDIA_CAPS.perUser.producers),
  // At least a full meeting's: 7 others × audio and video.
  ROOMS_MEDIA_USER_MAX_CONSUMERS: int(14, 10_000).default(DEFAULT_MEDIA_CAPS.perUser.consumers),
  ROOMS_MEDIA_SOCKET_MAX_TRANSPORTS: int(2, 1000).default(DEFAULT_MEDIA_CAPS.perSocket.transports),
  ROOMS_MEDIA_SOCKET_MAX_PRODUCERS: int(1, 1000).default(DEFAULT_MEDIA_CAPS.perSocket.producers),
  ROOMS_MEDIA_SOCKET_MAX_CONSUMERS: int(1, 10_000).default(DEFAULT_MEDIA_CAPS.perSocket.consumers),
  ROOMS_OUTBOX_ENABLED: flag.default(true),
  ROOMS_OUTBOX_BATCH: int(1, 5000).default(200),
  ROOMS_OUTBOX_CONCURRENCY: int(1, 1000).default(32),
  ROOMS_OUTBOX_POLL_MS: int(10).default(1_000),
  ROOMS_OUTBOX_GATHER_MS: int(0, 1_000).default(20),
  ROOMS_OUTBOX_LOCK_MS: int(1_000).default(60_000),
  ROOMS_OUTBOX_MAX_ATTEMPTS: int(1, 1000).default(12),
  ROOMS_OUTBOX_RETRY_BASE_MS: int(10).default(1_000),
  ROOMS_OUTBOX_RETRY_MAX_MS: int(10).default(600_000),
  ROOMS_WEBHOOK_TIMEOUT_MS: int(100, 120_000).default(5_000),
  ROOMS_WEBHOOK_ALLOW_PRIVATE: z
    .string()
    .refine(validAllowList, 'comma-separated CIDRs, IP addresses or host names')
    .default(''),
  ROOMS_OUTBOX_RETENTION_MS: int(0).default(604_800_000),
  ROOMS_OUTBOX_DEAD_RETENTION_MS: int(0).default(2_592_000_000),
  ROOMS_WS_MAX_BUFFER_BYTES: int(1_024).default(1_048_576),
  ROOMS_WS_PING_INTERVAL_MS: int(100).default(25_000),
  ROOMS_WS_MAX_ROOMS: int(1, 1000).default(50),
  ROOMS_WS_COALESCE_MS: int(0, 100).default(5),
  ROOMS_HTTP_TRUST_PROXY: trustProxy.default(false),
  ROOMS_DOCS_ENABLED: flag.default(true),
  ROOMS_LOGIN_FAILS_PER_ACCOUNT: int(0, 1_000_000).default(10),
  ROOMS_LOGIN_FAILS_PER_ADDRESS: int(0, 1_000_000).default(50),
  ROOMS_LOGIN_FAILURE_WINDOW_S: int(1, 86_400).default(900),
  ROOMS_HASH_CONCURRENCY: int(1, 256).optional(),
  ROOMS_HASH_MAX_QUEUE: int(0, 1_000_000).default(1_000),
  ROOMS_WS_MAX_FRAMES_PER_S: int(1, 100_000).default(50),
  ROOMS_WS_FRAME_BURST: int(1, 100_000).default(100),
  ROOMS_WS_MAX_IN_FLIGHT: int(1, 10_000).default(16),
  ROOMS_ROOM_CREATE_LIMIT: int(0, 1_000_000).default(30),
  ROOMS_ROOM_CREATE_WINDOW_S: int(1, 86_400).default(60),
  ROOMS_MAX_OPEN_ROOMS_PER_OWNER: int(0, 1_000_000).default(100),
  ROOMS_MEETING_CREATE_LIMIT: int(0, 1_000_000).default(30),
  ROOMS_MEETING_CREATE_WINDOW_S: int(1, 86_400).default(60),
  ROOMS_MAX_OPEN_MEETINGS_PER_HOST: int(0, 1_000_000).default(20),
  ROOMS_MEETING_INVITES_PER_USER: int(0, 1_000_000).default(100),
  ROOMS_MEETING_INVITE_WINDOW_S: int(1, 86_400).default(600),
  ROOMS_MEETING_INVITE_TOKENS_PER_MEETING: int(0, 1_000_000).default(100),
  ROOMS_MEETING_CHATS_PER_USER: int(0, 1_000_000).default(20),
  ROOMS_MEETING_CHAT_WINDOW_S: int(1, 86_400).default(10),
  ROOMS_MEETING_LOOKUP_FAILS_PER_USER: int(0, 1_000_000).default(20),
  ROOMS_MEETING_LOOKUP_FAILS_PER_ADDRESS: int(0, 1_000_000).default(100),
  ROOMS_MEETING_LOOKUP_FAILURE_WINDOW_S: int(1, 86_400).default(600),
  ROOMS_USER_LOOKUPS_PER_USER: int(0, 1_000_000).default(1_000),
  ROOMS_USER_LOOKUP_WINDOW_S: int(1, 86_400).default(600),
  ROOMS_LOG_LEVEL: logLevelVariable,
});

/** The media server's own rules, and the node's: a separate server needs the shared token. */
function mediaRules(e: z.infer<typeof schema>, ctx: z.RefinementCtx): void {
  mediaServerRules(e, ctx);
  // Without the media role and without ROOMS_MEDIA_URL the node has no media server to call.
  const separate = e.ROOMS_ROLES.media ? !e.ROOMS_MEDIA_EMBEDDED : Boolean(e.ROOMS_MEDIA_URL);
  if (separate && !e.ROOMS_MEDIA_INTERNAL_TOKEN) {
    const message = e.ROOMS_ROLES.media
      ? 'required when ROOMS_MEDIA_EMBEDDED=false'
      : 'required with ROOMS_MEDIA_URL on a node without the media role';
    ctx.addIssue({ code: 'custom', path: ['ROOMS_MEDIA_INTERNAL_TOKEN'], message });
  }
  // A listener consumes every seat's producer: fewer consumers would leave seats unheard.
  if (e.ROOMS_MEDIA_USER_MAX_CONSUMERS < e.ROOMS_MAX_SEATS) {
    const message = `at least ROOMS_MAX_SEATS (${e.ROOMS_MAX_SEATS}): a listener hears every seat`;
    ctx.addIssue({ code: 'custom', path: ['ROOMS_MEDIA_USER_MAX_CONSUMERS'], message });
  }
  // One socket must be able to hold what its user may hold in one room.
  for (const slot of ['TRANSPORTS', 'PRODUCERS', 'CONSUMERS'] as const) {
    const user = e[`ROOMS_MEDIA_USER_MAX_${slot}`];
    if (e[`ROOMS_MEDIA_SOCKET_MAX_${slot}`] < user) {
      const message = `at least ROOMS_MEDIA_USER_MAX_${slot} (${user})`;
      ctx.addIssue({ code: 'custom', path: [`ROOMS_MEDIA_SOCKET_MAX_${slot}`], message });
    }
  }
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function validAllowList(value: string): boolean {
  try {
    new DestinationPolicy(splitList(value));
    return true;
  } catch {
    return false;
  }
}

/** A webhook request must end well before its claim's lock, or another node may resend it. */
function outboxRules(e: z.infer<typeof schema>, ctx: z.RefinementCtx): void {
  if (e.ROOMS_OUTBOX_LOCK_MS < 2 * e.ROOMS_WEBHOOK_TIMEOUT_MS) {
    const message = 'must be at least twice ROOMS_WEBHOOK_TIMEOUT_MS';
    ctx.addIssue({ code: 'custom', path: ['ROOMS_OUTBOX_LOCK_MS'], message });
  }
}

/** Cluster mode (MySQL or Redis): nodes call each other, so they must share a credential. */
function grpcRules(e: z.infer<typeof schema>, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message });
  if ((/^mysql:\/\//i.test(e.ROOMS_DB_URL) || e.ROOMS_REDIS_URL) && !e.ROOMS_GRPC_TOKEN) {
    issue(
      'ROOMS_GRPC_TOKEN',
      'required in cluster mode (a mysql:// ROOMS_DB_URL or ROOMS_REDIS_URL set): every node must share one',
    );
  }
  const tls = [e.ROOMS_GRPC_TLS_CERT, e.ROOMS_GRPC_TLS_KEY, e.ROOMS_GRPC_TLS_CA];
  if (tls.some(Boolean) && !tls.every(Boolean)) {
    for (const name of [
      'ROOMS_GRPC_TLS_CERT',
      'ROOMS_GRPC_TLS_KEY',
      'ROOMS_GRPC_TLS_CA',
    ] as const) {
      if (!e[name])
        issue(name, 'ROOMS_GRPC_TLS_CERT, _KEY and _CA go together: set all three or none');
    }
  }
}

function mediaAndOutboxRules(e: z.infer<typeof schema>, ctx: z.RefinementCtx): void {
  roleRules(e, ctx);
  mediaRules(e, ctx);
  outboxRules(e, ctx);
  grpcRules(e, ctx);
}

/** Rules across variables (they run once every variable is valid on its own). */
const checked = schema.superRefine(mediaAndOutboxRules).superRefine((e, ctx) => {
  if (/^mysql:\/\//i.test(e.ROOMS_DB_URL) && !e.ROOMS_JWT_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['ROOMS_JWT_SECRET'],
      message: 'required with a mysql:// ROOMS_DB_URL: every node must share one secret',
    });
  }
});

export interface Config {
  readonly nodeId: string;
  /** `ROOMS_ROLES`: what this node runs (./roles.ts); all four by default. */
  readonly roles: NodeRoles;
  /**
   * `ROOMS_CELLS_ADDR`, an edge without cells only: the room-service load balancer every
   * command goes to. Null: straight to the owner in Redis, else a live cells node.
   */
  readonly cellsAddr: string | null;
  readonly advertiseAddr: string;
  readonly http: {
    readonly host: string;
    readonly port: number;
    /** Fastify's `trustProxy`: whose `X-Forwarded-For` names the client (`request.ip`). */
    readonly trustProxy: boolean | number | string;
    /** The OpenAPI document (/docs/json) and Swagger UI (/docs). */
    readonly docsEnabled: boolean;
  };
  readonly grpcPort: number;
  readonly db: { readonly url: string; readonly poolSize: number };
  /** Unset: in-memory lease, registry and bus (a single node). */
  readonly redisUrl: string | null;
  readonly keyPrefix: string;
  readonly cell: {
    readonly leaseTtlMs: number;
    readonly snapshotEvery: number;
    readonly maxBatch: number;
    /** Age after which command-log rows at or below their room's snapshot go (0: kept). */
    readonly commandLogRetentionMs: number;
    /** The retry window: age after which a request id's outcome is forgotten (0: kept). */
    readonly requestIdRetentionMs: number;
    readonly idleAfterMs: number;
    readonly timerTickMs: number;
    readonly sweepIntervalMs: number;
    readonly drainTimeoutMs: number;
  };
  readonly accounts: {
    /** Unset: embedded only; a secret generated once into a file beside the SQLite file. */
    readonly jwtSecret: string | null;
    readonly jwtTtlS: number;
    readonly bcryptCost: number;
    /** Failed logins allowed per account / per client address in one window (0: no limit). */
    readonly loginFailuresPerAccount: number;
    readonly loginFailuresPerAddress: number;
    readonly loginFailureWindowMs: number;
    /** Password hashes running at once (on libuv's thread pool), and waiting at most. */
    readonly hashConcurrency: number;
    readonly hashMaxQueue: number;
  };
  readonly grpc: {
    readonly host: string;
    /** Used when the incoming call has no deadline of its own (REST, TRTC, gRPC without one). */
    readonly forwardTimeoutMs: number;
    /**
     * The cluster credential (`authorization: Bearer <token>`) of every call, also between
     * nodes. Unset (embedded mode only): the node makes up a random one per start.
     */
    readonly token: string | null;
    /** PEM file paths for mutual TLS; null: plaintext (the token is still required). */
    readonly tls: {
      readonly certFile: string;
      readonly keyFile: string;
      readonly caFile: string;
    } | null;
  };
  /** The meeting's lifecycle deadlines (meeting-api.md Task 8). */
  readonly meeting: {
    /** An emptied meeting ends (`empty_ttl`) after this long without a join. */
    readonly emptyTtlMs: number;
    /** The host without a live WebSocket for this long loses the host role. */
    readonly hostGraceMs: number;
    /**
     * A node's report of a user's live socket holds this long unless refreshed (each node
     * refreshes every third of it); a node that died stops counting after it.
     */
    readonly presenceTtlMs: number;
    /** A meeting with no activity for this long ends (`system_error`). */
    readonly staleMs: number;
    /** The chats of a meeting ended this long ago are deleted; 0 keeps them. */
    readonly chatRetentionMs: number;
  };
  /** The notification centre's retention sweep. */
  readonly notifications: {
    /** Notifications created this long ago are deleted; 0 keeps them. */
    readonly retentionMs: number;
    /** Newest notifications kept per recipient; 0: no cap. */
    readonly maxPerUser: number;
  };
  readonly voice: {
    readonly presenceTimeoutMs: number;
    readonly publishTimeoutMs: number;
    readonly maxSeats: number;
    /** `sdkAppId:app_code:callback_key[,…]`; empty: TRTC callbacks are refused. */
    readonly trtcApps: string;
    /** How often every node checks every voice room's producers against its seats. */
    readonly mediaCheckMs: number;
  };
  /** The node's operator API (`X-Admin-Token`): every admin route set reads its token here. */
  readonly admin: {
    /** `ROOMS_ADMIN_TOKEN`; unset: every admin call is refused. */
    readonly token: string | null;
  };
  readonly media: {
    /** Run a media server inside this node (`npm start`, the media role); false: call `url`. */
    readonly embedded: boolean;
    /** No media server at all (no media role and no ROOMS_MEDIA_URL): rooms have no media. */
    readonly none: boolean;
    /** The id meetings record for this node's media server (`ROOMS_MEDIA_SERVER_ID`). */
    readonly serverId: string;
    /** Internal API of a separate media server (used when not embedded). */
    readonly url: string;
    /** Unset: an embedded server makes up a random one per start. */
    readonly internalToken: string | null;
    readonly timeoutMs: number;
    /** Close calls are tried `closeRetry + 1` times (200 ms, then 500 ms apart). */
    readonly closeRetry: number;
    /** Transports, producers, consumers: per user in a room, per socket (ROOMS_MEDIA_*_MAX_*). */
    readonly caps: MediaCaps;
    /** The media server's own settings (embedded, or `npm run start:media`). */
    readonly server: MediaServerSettings;
    /** The embedded server's URL in the media directory; null: the bound address. */
    readonly advertiseUrl: string | null;
    /** How long a media server's directory record lives without a heartbeat. */
    readonly registrationTtlMs: number;
    /**
     * How long a node's media holder record lives without a heartbeat: what the sockets of a
     * node dead this long held on the media servers is released by another node.
     */
    readonly holderTtlMs: number;
  };
  /** The outbox relay of this node (ROOMS_OUTBOX_*, ROOMS_WEBHOOK_TIMEOUT_MS). */
  readonly outbox: {
    /** The relay and the outbox retention run here (the relay role and ROOMS_OUTBOX_ENABLED). */
    readonly enabled: boolean;
    readonly batchSize: number;
    readonly concurrency: number;
    readonly pollMs: number;
    /** Least time between two claims of a relay that is not behind (ROOMS_OUTBOX_GATHER_MS). */
    readonly gatherMs: number;
    readonly lockMs: number;
    readonly maxAttempts: number;
    readonly retryBaseMs: number;
    readonly retryMaxMs: number;
    readonly webhookTimeoutMs: number;
    /** ROOMS_WEBHOOK_ALLOW_PRIVATE: non-global destinations webhooks may reach anyway. */
    readonly webhookAllowPrivate: readonly string[];
    /** Delivered and skipped rows are deleted this long after settling; 0 keeps them. */
    readonly retentionMs: number;
    /** Failed rows are deleted this long after failing; 0 keeps them. */
    readonly failedRetentionMs: number;
  };
  /** The WebSocket hub (ROOMS_WS_*). */
  readonly realtime: {
    readonly maxBufferedBytes: number;
    readonly pingIntervalMs: number;
    readonly maxRoomsPerSocket: number;
    /** Room frames leave at most once per this many ms (one write per socket). */
    readonly coalesceMs: number;
    /** Token bucket of C→S frames per socket: refill per second, and bucket size. */
    readonly maxFramesPerSecond: number;
    readonly frameBurst: number;
    /** C→S requests of one socket being handled at once. */
    readonly maxInFlight: number;
  };
  /** Per-user creation limits (ROOMS_ROOM_CREATE_*, ROOMS_MAX_OPEN_ROOMS_PER_OWNER); 0: off. */
  readonly quotas: {
    readonly roomCreateLimit: number;
    readonly roomCreateWindowMs: number;
    readonly maxOpenRoomsPerOwner: number;
    /** Meetings (ROOMS_MEETING_CREATE_*, ROOMS_MAX_OPEN_MEETINGS_PER_HOST); 0: off. */
    readonly meetingCreateLimit: number;
    readonly meetingCreateWindowMs: number;
    readonly maxOpenMeetingsPerHost: number;
    /** Ids one user may look up by `GET /api/v1/users?ids=` per window; 0: no limit. */
    readonly userLookupLimit: number;
    readonly userLookupWindowMs: number;
  };
  /** Limits on one meeting user's invites, chats and failed code lookups; limit 0: off. */
  readonly meetingLimits: {
    readonly invitesPerUser: RateRule;
    /** Invite tokens one meeting may have alive at once (a token lives 600 s). */
    readonly inviteTokensPerMeeting: number;
    readonly chatsPerUser: RateRule;
    readonly lookupFailsPerUser: RateRule;
    readonly lookupFailsPerAddress: RateRule;
  };
  readonly logLevel: string;
}

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const e = parseEnv(checked, env);
  const roles = e.ROOMS_ROLES;
  const embeddedMedia = roles.media && e.ROOMS_MEDIA_EMBEDDED;
  return deepFreeze({
    nodeId: e.ROOMS_NODE_ID ?? defaultNodeId(e.ROOMS_HTTP_PORT),
    roles: { ...roles },
    cellsAddr: e.ROOMS_CELLS_ADDR ?? null,
    advertiseAddr: e.ROOMS_ADVERTISE_ADDR ?? `127.0.0.1:${e.ROOMS_GRPC_PORT}`,
    http: {
      host: e.ROOMS_HTTP_HOST,
      port: e.ROOMS_HTTP_PORT,
      trustProxy: e.ROOMS_HTTP_TRUST_PROXY,
      docsEnabled: e.ROOMS_DOCS_ENABLED,
    },
    grpcPort: e.ROOMS_GRPC_PORT,
    db: { url: e.ROOMS_DB_URL, poolSize: e.ROOMS_DB_POOL_SIZE },
    redisUrl: e.ROOMS_REDIS_URL ?? null,
    keyPrefix: e.ROOMS_KEY_PREFIX,
    cell: {
      leaseTtlMs: e.ROOMS_LEASE_TTL_MS,
      snapshotEvery: e.ROOMS_SNAPSHOT_EVERY,
      maxBatch: e.ROOMS_MAX_BATCH,
      commandLogRetentionMs: e.ROOMS_COMMAND_LOG_RETENTION_MS,
      requestIdRetentionMs: e.ROOMS_REQUEST_ID_RETENTION_MS,
      idleAfterMs: e.ROOMS_IDLE_AFTER_MS,
      timerTickMs: e.ROOMS_TIMER_TICK_MS,
      sweepIntervalMs: e.ROOMS_SWEEP_INTERVAL_MS,
      drainTimeoutMs: e.ROOMS_DRAIN_TIMEOUT_MS,
    },
    accounts: {
      jwtSecret: e.ROOMS_JWT_SECRET ?? null,
      jwtTtlS: e.ROOMS_JWT_TTL_S,
      bcryptCost: e.ROOMS_BCRYPT_COST,
      loginFailuresPerAccount: e.ROOMS_LOGIN_FAILS_PER_ACCOUNT,
      loginFailuresPerAddress: e.ROOMS_LOGIN_FAILS_PER_ADDRESS,
      loginFailureWindowMs: e.ROOMS_LOGIN_FAILURE_WINDOW_S * 1000,
      hashConcurrency: e.ROOMS_HASH_CONCURRENCY ?? availableParallelism(),
      hashMaxQueue: e.ROOMS_HASH_MAX_QUEUE,
    },
    grpc: {
      host: e.ROOMS_GRPC_HOST,
      forwardTimeoutMs: e.ROOMS_FORWARD_TIMEOUT_MS,
      token: e.ROOMS_GRPC_TOKEN ?? null,
      tls:
        e.ROOMS_GRPC_TLS_CERT && e.ROOMS_GRPC_TLS_KEY && e.ROOMS_GRPC_TLS_CA
          ? {
              certFile: e.ROOMS_GRPC_TLS_CERT,
              keyFile: e.ROOMS_GRPC_TLS_KEY,
              caFile: e.ROOMS_GRPC_TLS_CA,
            }
          : null,
    },
    meeting: {
      emptyTtlMs: e.ROOMS_MEETING_EMPTY_TTL_MS,
      hostGraceMs: e.ROOMS_MEETING_HOST_GRACE_MS,
      presenceTtlMs: e.ROOMS_MEETING_PRESENCE_TTL_MS,
      staleMs: e.ROOMS_MEETING_STALE_MS,
      chatRetentionMs: e.ROOMS_MEETING_CHAT_RETENTION_MS,
    },
    notifications: {
      retentionMs: e.ROOMS_NOTIFICATION_RETENTION_MS,
      maxPerUser: e.ROOMS_NOTIFICATION_MAX_PER_USER,
    },
    voice: {
      presenceTimeoutMs: e.ROOMS_PRESENCE_TIMEOUT_MS,
      publishTimeoutMs: e.ROOMS_PUBLISH_TIMEOUT_MS,
      maxSeats: e.ROOMS_MAX_SEATS,
      trtcApps: e.ROOMS_TRTC_APPS ?? '',
      mediaCheckMs: e.ROOMS_VOICE_MEDIA_CHECK_MS,
    },
    admin: { token: e.ROOMS_ADMIN_TOKEN ?? null },
    media: {
      embedded: embeddedMedia,
      none: !roles.media && !e.ROOMS_MEDIA_URL,
      serverId:
        e.ROOMS_MEDIA_SERVER_ID ??
        (embeddedMedia
          ? `${e.ROOMS_NODE_ID ?? defaultNodeId(e.ROOMS_HTTP_PORT)}-media`
          : 'media-1'),
      url: (e.ROOMS_MEDIA_URL ?? `http://127.0.0.1:${e.ROOMS_MEDIA_PORT}`).replace(/\/$/, ''),
      internalToken: e.ROOMS_MEDIA_INTERNAL_TOKEN ?? null,
      timeoutMs: e.ROOMS_MEDIA_TIMEOUT_MS,
      closeRetry: e.ROOMS_MEDIA_CLOSE_RETRY,
      caps: {
        perUser: {
          transports: e.ROOMS_MEDIA_USER_MAX_TRANSPORTS,
          producers: e.ROOMS_MEDIA_USER_MAX_PRODUCERS,
          consumers: e.ROOMS_MEDIA_USER_MAX_CONSUMERS,
        },
        perSocket: {
          transports: e.ROOMS_MEDIA_SOCKET_MAX_TRANSPORTS,
          producers: e.ROOMS_MEDIA_SOCKET_MAX_PRODUCERS,
          consumers: e.ROOMS_MEDIA_SOCKET_MAX_CONSUMERS,
        },
      },
      server: mediaServerOptions(e),
      advertiseUrl: e.ROOMS_MEDIA_ADVERTISE_URL ?? null,
      registrationTtlMs: e.ROOMS_MEDIA_REGISTRATION_TTL_MS,
      holderTtlMs: e.ROOMS_MEDIA_HOLDER_TTL_MS,
    },
    outbox: {
      enabled: roles.relay && e.ROOMS_OUTBOX_ENABLED,
      batchSize: e.ROOMS_OUTBOX_BATCH,
      concurrency: e.ROOMS_OUTBOX_CONCURRENCY,
      pollMs: e.ROOMS_OUTBOX_POLL_MS,
      gatherMs: e.ROOMS_OUTBOX_GATHER_MS,
      lockMs: e.ROOMS_OUTBOX_LOCK_MS,
      maxAttempts: e.ROOMS_OUTBOX_MAX_ATTEMPTS,
      retryBaseMs: e.ROOMS_OUTBOX_RETRY_BASE_MS,
      retryMaxMs: e.ROOMS_OUTBOX_RETRY_MAX_MS,
      webhookTimeoutMs: e.ROOMS_WEBHOOK_TIMEOUT_MS,
      webhookAllowPrivate: splitList(e.ROOMS_WEBHOOK_ALLOW_PRIVATE),
      retentionMs: e.ROOMS_OUTBOX_RETENTION_MS,
      failedRetentionMs: e.ROOMS_OUTBOX_DEAD_RETENTION_MS,
    },
    realtime: {
      maxBufferedBytes: e.ROOMS_WS_MAX_BUFFER_BYTES,
      pingIntervalMs: e.ROOMS_WS_PING_INTERVAL_MS,
      maxRoomsPerSocket: e.ROOMS_WS_MAX_ROOMS,
      coalesceMs: e.ROOMS_WS_COALESCE_MS,
      maxFramesPerSecond: e.ROOMS_WS_MAX_FRAMES_PER_S,
      frameBurst: e.ROOMS_WS_FRAME_BURST,
      maxInFlight: e.ROOMS_WS_MAX_IN_FLIGHT,
    },
    quotas: {
      roomCreateLimit: e.ROOMS_ROOM_CREATE_LIMIT,
      roomCreateWindowMs: e.ROOMS_ROOM_CREATE_WINDOW_S * 1000,
      maxOpenRoomsPerOwner: e.ROOMS_MAX_OPEN_ROOMS_PER_OWNER,
      meetingCreateLimit: e.ROOMS_MEETING_CREATE_LIMIT,
      meetingCreateWindowMs: e.ROOMS_MEETING_CREATE_WINDOW_S * 1000,
      maxOpenMeetingsPerHost: e.ROOMS_MAX_OPEN_MEETINGS_PER_HOST,
      userLookupLimit: e.ROOMS_USER_LOOKUPS_PER_USER,
      userLookupWindowMs: e.ROOMS_USER_LOOKUP_WINDOW_S * 1000,
    },
    meetingLimits: {
      invitesPerUser: {
        limit: e.ROOMS_MEETING_INVITES_PER_USER,
        windowMs: e.ROOMS_MEETING_INVITE_WINDOW_S * 1000,
      },
      inviteTokensPerMeeting: e.ROOMS_MEETING_INVITE_TOKENS_PER_MEETING,
      chatsPerUser: {
        limit: e.ROOMS_MEETING_CHATS_PER_USER,
        windowMs: e.ROOMS_MEETING_CHAT_WINDOW_S * 1000,
      },
      lookupFailsPerUser: {
        limit: e.ROOMS_MEETING_LOOKUP_FAILS_PER_USER,
        windowMs: e.ROOMS_MEETING_LOOKUP_FAILURE_WINDOW_S * 1000,
      },
      lookupFailsPerAddress: {
        limit: e.ROOMS_MEETING_LOOKUP_FAILS_PER_ADDRESS,
        windowMs: e.ROOMS_MEETING_LOOKUP_FAILURE_WINDOW_S * 1000,
      },
    },
    logLevel: e.ROOMS_LOG_LEVEL,
  });
}
