/**
 * The schema of a rooms node's environment: every `ROOMS_*` variable with its default and its
 * check, and the rules across variables. ../config.ts maps the parsed values to the Config.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  mediaRegistrationVariables,
  mediaServerIdVariable,
  mediaServerRules,
  mediaServerVariables,
} from '../../media-server/config.js';
import { TURN_URL } from '../../edge/room-media/ice-servers.js';
import { DEFAULT_MEDIA_CAPS } from '../../edge/room-media/media-admission.js';
import { DestinationPolicy } from '../../outbox/destinations.js';
import { flag, int, logLevelVariable, nodeIdVariable } from '../../shared/env.js';
import { ALL_ROLES, roleRules, rolesVariable } from '../roles.js';

/** Whether this runtime knows the IANA time zone `name`. */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

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
  ROOMS_VOICE_ANNOUNCED_AUDIENCE: int(0, 1_000_000).default(200),
  ROOMS_SEAT_APPLICATION_TTL_MS: int(1_000, 3_600_000).default(60_000),
  ROOMS_VOICE_CHATS_PER_USER: int(0, 1_000_000).default(5),
  ROOMS_VOICE_CHAT_WINDOW_S: int(1, 86_400).default(1),
  // 0 keeps every message; otherwise at least a minute.
  ROOMS_VOICE_CHAT_RETENTION_MS: int(0)
    .refine((v) => v === 0 || v >= 60_000, '0 or at least 60000')
    .default(604_800_000),
  ROOMS_VOICE_RANKINGS: flag.default(true),
  ROOMS_VOICE_RANKING_TIME_ZONE: z
    .string()
    .refine(isTimeZone, 'an IANA time zone, e.g. UTC or Asia/Shanghai')
    .default('UTC'),
  ROOMS_MEETING_EMPTY_TTL_MS: int(1000).default(300_000),
  ROOMS_MEETING_HOST_GRACE_MS: int(1000).default(30_000),
  ROOMS_MEETING_PRESENCE_TTL_MS: int(1000).default(90_000),
  ROOMS_MEETING_STALE_MS: int(60_000).default(14_400_000),
  ROOMS_MEETING_WAITING_TTL_MS: int(1_000).default(600_000),
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
  // TURN for clients whose network blocks UDP or all but 443 (../../edge/room-media/ice-servers.ts).
  ROOMS_TURN_URLS: z
    .string()
    .refine(
      (v) => splitList(v).every((url) => TURN_URL.test(url)),
      'comma-separated turn: / turns: URLs, e.g. turn:turn.example.com:3478?transport=tcp',
    )
    .optional(),
  ROOMS_TURN_SECRET: z.string().min(16, 'at least 16 characters').optional(),
  ROOMS_TURN_CREDENTIAL_TTL_S: int(60, 7 * 86_400).default(86_400),
  // Plain RTP transports for clients on the media server's host (the load tester's media).
  ROOMS_MEDIA_PLAIN_RTP: flag.default(false),
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

export function splitList(value: string): string[] {
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

/** TURN URLs and their secret go together: a TURN server refuses credentials made without one. */
function turnRules(e: z.infer<typeof schema>, ctx: z.RefinementCtx): void {
  if (Boolean(e.ROOMS_TURN_URLS) === Boolean(e.ROOMS_TURN_SECRET)) return;
  const path = e.ROOMS_TURN_URLS ? 'ROOMS_TURN_SECRET' : 'ROOMS_TURN_URLS';
  const message = 'ROOMS_TURN_URLS and ROOMS_TURN_SECRET go together: set both or neither';
  ctx.addIssue({ code: 'custom', path: [path], message });
}

function mediaAndOutboxRules(e: z.infer<typeof schema>, ctx: z.RefinementCtx): void {
  roleRules(e, ctx);
  turnRules(e, ctx);
  mediaRules(e, ctx);
  outboxRules(e, ctx);
  grpcRules(e, ctx);
}

/** Rules across variables (they run once every variable is valid on its own). */
export const checked = schema.superRefine(mediaAndOutboxRules).superRefine((e, ctx) => {
  if (/^mysql:\/\//i.test(e.ROOMS_DB_URL) && !e.ROOMS_JWT_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['ROOMS_JWT_SECRET'],
      message: 'required with a mysql:// ROOMS_DB_URL: every node must share one secret',
    });
  }
});
