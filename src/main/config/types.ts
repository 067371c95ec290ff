/** The shape of a rooms node's configuration, as ../config.ts's `loadConfig` returns it. */
import type { MediaServerSettings } from '../../media-server/config.js';
import type { RateRule } from '../../shared/rate-limiter.js';
import type { TurnSettings } from '../../edge/room-media/ice-servers.js';
import type { MediaCaps } from '../../edge/room-media/media-admission.js';
import type { NodeRoles } from '../roles.js';

export interface Config {
  readonly nodeId: string;
  /** `ROOMS_ROLES`: what this node runs (../roles.ts); all four by default. */
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
    /** A join left in the waiting room this long without the host's decision expires. */
    readonly waitingTtlMs: number;
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
    /** Past this many present members, plain members' joins and leaves are counted only. */
    readonly announcedAudience: number;
    /** How long a seat application waits for the owner or an admin. */
    readonly seatApplicationTtlMs: number;
    /** Public chat messages per user per window (0: no limit). */
    readonly chatsPerUser: RateRule;
    /** Age after which chat messages are deleted; 0 keeps them. */
    readonly chatRetentionMs: number;
    /** Keep the gift rankings in each gift's transaction. */
    readonly rankings: boolean;
    /** The rankings' day: an IANA time zone. */
    readonly rankingTimeZone: string;
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
    /** TURN servers and their shared secret (`ROOMS_TURN_*`); null: none. */
    readonly turn: TurnSettings | null;
    /** Whether `….transport.plain.create` is served (loopback RTP, for local load tests). */
    readonly plainRtp: boolean;
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
