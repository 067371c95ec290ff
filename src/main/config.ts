/**
 * Reads a rooms node's environment (the standalone media server: src/media-server/config.ts)
 * into one typed, validated, frozen object; a bad value is a startup error naming the variable.
 * The variables and their checks: ./config/schema.ts; the object's shape: ./config/types.ts.
 */
import { availableParallelism } from 'node:os';
import { mediaServerOptions } from '../media-server/config.js';
import { deepFreeze, defaultNodeId, parseEnv } from '../shared/env.js';
import { checked, splitList } from './config/schema.js';
import type { Config } from './config/types.js';

export { ConfigError } from '../shared/env.js';
export type { Config } from './config/types.js';

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
      waitingTtlMs: e.ROOMS_MEETING_WAITING_TTL_MS,
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
      announcedAudience: e.ROOMS_VOICE_ANNOUNCED_AUDIENCE,
      seatApplicationTtlMs: e.ROOMS_SEAT_APPLICATION_TTL_MS,
      chatsPerUser: {
        limit: e.ROOMS_VOICE_CHATS_PER_USER,
        windowMs: e.ROOMS_VOICE_CHAT_WINDOW_S * 1000,
      },
      chatRetentionMs: e.ROOMS_VOICE_CHAT_RETENTION_MS,
      rankings: e.ROOMS_VOICE_RANKINGS,
      rankingTimeZone: e.ROOMS_VOICE_RANKING_TIME_ZONE,
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
      plainRtp: e.ROOMS_MEDIA_PLAIN_RTP,
      turn:
        e.ROOMS_TURN_URLS && e.ROOMS_TURN_SECRET
          ? {
              urls: splitList(e.ROOMS_TURN_URLS),
              secret: e.ROOMS_TURN_SECRET,
              credentialTtlS: e.ROOMS_TURN_CREDENTIAL_TTL_S,
            }
          : null,
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
