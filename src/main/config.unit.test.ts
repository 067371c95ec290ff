import assert from 'node:assert/strict';
import { availableParallelism, hostname } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, type Config } from './config.js';

/** Every `ROOMS_*` variable with a non-default, valid value. */
const FULL_ENV: NodeJS.ProcessEnv = {
  ROOMS_NODE_ID: 'node-a.1_x',
  ROOMS_ROLES: 'edge, relay,media',
  ROOMS_CELLS_ADDR: 'rooms-cells.internal:9090',
  ROOMS_ADVERTISE_ADDR: 'rooms-a.internal:7001',
  ROOMS_HTTP_HOST: '127.0.0.1',
  ROOMS_HTTP_PORT: '8181',
  ROOMS_GRPC_PORT: '9191',
  ROOMS_DB_URL: 'mysql://rooms:secret@db.internal:3306/rooms',
  ROOMS_DB_POOL_SIZE: '25',
  ROOMS_REDIS_URL: 'redis://cache.internal:6380/2',
  ROOMS_KEY_PREFIX: 'prod:',
  ROOMS_LEASE_TTL_MS: '5000',
  ROOMS_SNAPSHOT_EVERY: '50',
  ROOMS_COMMAND_LOG_RETENTION_MS: '86400000',
  ROOMS_REQUEST_ID_RETENTION_MS: '0',
  ROOMS_MAX_BATCH: '64',
  ROOMS_IDLE_AFTER_MS: '60000',
  ROOMS_TIMER_TICK_MS: '100',
  ROOMS_SWEEP_INTERVAL_MS: '1500',
  ROOMS_DRAIN_TIMEOUT_MS: '7000',
  ROOMS_JWT_SECRET: 'a-shared-secret-of-at-least-32-bytes!',
  ROOMS_JWT_TTL_S: '3600',
  ROOMS_BCRYPT_COST: '12',
  ROOMS_GRPC_HOST: '127.0.0.2',
  ROOMS_GRPC_TOKEN: 'a-cluster-grpc-token-of-32-chars!',
  ROOMS_GRPC_TLS_CERT: '/etc/rooms/node.pem',
  ROOMS_GRPC_TLS_KEY: '/etc/rooms/node.key',
  ROOMS_GRPC_TLS_CA: '/etc/rooms/ca.pem',
  ROOMS_FORWARD_TIMEOUT_MS: '2500',
  ROOMS_PRESENCE_TIMEOUT_MS: '30000',
  ROOMS_PUBLISH_TIMEOUT_MS: '9000',
  ROOMS_MAX_SEATS: '12',
  ROOMS_MEETING_EMPTY_TTL_MS: '120000',
  ROOMS_MEETING_HOST_GRACE_MS: '5000',
  ROOMS_MEETING_PRESENCE_TTL_MS: '45000',
  ROOMS_MEETING_STALE_MS: '3600000',
  ROOMS_MEETING_WAITING_TTL_MS: '120000',
  ROOMS_MEETING_CHAT_RETENTION_MS: '0',
  ROOMS_NOTIFICATION_RETENTION_MS: '3600000',
  ROOMS_NOTIFICATION_MAX_PER_USER: '0',
  ROOMS_ADMIN_TOKEN: 'an-admin-token-0123',
  ROOMS_TRTC_APPS: '1400000001:default:key-one, 1400000002:shop:key:two',
  ROOMS_MEDIA_EMBEDDED: 'false',
  ROOMS_MEDIA_URL: 'http://media.internal:7171/',
  ROOMS_MEDIA_SERVER_ID: 'media-a.1',
  ROOMS_VOICE_MEDIA_CHECK_MS: '2500',
  ROOMS_MEDIA_HOST: '0.0.0.0',
  ROOMS_MEDIA_PORT: '7171',
  ROOMS_MEDIA_INTERNAL_TOKEN: 'a-media-token-of-16+',
  ROOMS_MEDIA_WORKERS: '3',
  ROOMS_MEDIA_WORKER_BIN: '/opt/mediasoup-worker',
  ROOMS_MEDIA_LISTEN_IP: '0.0.0.0',
  ROOMS_MEDIA_ANNOUNCED_ADDRESS: 'media.example.com',
  ROOMS_MEDIA_RTC_MIN_PORT: '41000',
  ROOMS_MEDIA_RTC_MAX_PORT: '41999',
  ROOMS_MEDIA_WEBRTC_SERVER_PORT: '44440',
  ROOMS_MEDIA_ROUTER_CONSUMERS: '250',
  ROOMS_VOICE_ANNOUNCED_AUDIENCE: '0',
  ROOMS_SEAT_APPLICATION_TTL_MS: '30000',
  ROOMS_VOICE_CHATS_PER_USER: '9',
  ROOMS_VOICE_CHAT_WINDOW_S: '3',
  ROOMS_VOICE_CHAT_RETENTION_MS: '0',
  ROOMS_VOICE_RANKINGS: 'false',
  ROOMS_VOICE_RANKING_TIME_ZONE: 'Asia/Shanghai',
  ROOMS_MEDIA_EDGE_LINGER_MS: '0',
  ROOMS_MEDIA_PIPE_LISTEN_IP: '10.0.0.5',
  ROOMS_MEDIA_PIPE_ANNOUNCED_ADDRESS: 'media-1.internal',
  ROOMS_MEDIA_PEER_LOST_MS: '1500',
  ROOMS_MEDIA_TIMEOUT_MS: '2500',
  ROOMS_MEDIA_CLOSE_RETRY: '4',
  ROOMS_TURN_URLS: 'turns:turn.example.com:443?transport=tcp',
  ROOMS_TURN_SECRET: 'a-turn-secret-of-16+',
  ROOMS_TURN_CREDENTIAL_TTL_S: '600',
  ROOMS_MEDIA_PLAIN_RTP: 'true',
  ROOMS_MEDIA_USER_MAX_TRANSPORTS: '3',
  ROOMS_MEDIA_USER_MAX_PRODUCERS: '2',
  ROOMS_MEDIA_USER_MAX_CONSUMERS: '20',
  ROOMS_MEDIA_SOCKET_MAX_TRANSPORTS: '6',
  ROOMS_MEDIA_SOCKET_MAX_PRODUCERS: '5',
  ROOMS_MEDIA_SOCKET_MAX_CONSUMERS: '40',
  ROOMS_OUTBOX_ENABLED: 'false',
  ROOMS_OUTBOX_BATCH: '50',
  ROOMS_OUTBOX_CONCURRENCY: '4',
  ROOMS_OUTBOX_POLL_MS: '250',
  ROOMS_OUTBOX_LOCK_MS: '20000',
  ROOMS_OUTBOX_MAX_ATTEMPTS: '7',
  ROOMS_OUTBOX_RETRY_BASE_MS: '500',
  ROOMS_OUTBOX_RETRY_MAX_MS: '30000',
  ROOMS_WEBHOOK_TIMEOUT_MS: '3000',
  ROOMS_WEBHOOK_ALLOW_PRIVATE: '10.20.0.0/16, fd00::/8,127.0.0.1,hooks.internal',
  ROOMS_OUTBOX_RETENTION_MS: '86400000',
  ROOMS_OUTBOX_DEAD_RETENTION_MS: '0',
  ROOMS_WS_MAX_BUFFER_BYTES: '262144',
  ROOMS_WS_PING_INTERVAL_MS: '10000',
  ROOMS_WS_MAX_ROOMS: '5',
  ROOMS_WS_COALESCE_MS: '0',
  ROOMS_HTTP_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7',
  ROOMS_DOCS_ENABLED: 'false',
  ROOMS_LOGIN_FAILS_PER_ACCOUNT: '5',
  ROOMS_LOGIN_FAILS_PER_ADDRESS: '0',
  ROOMS_LOGIN_FAILURE_WINDOW_S: '600',
  ROOMS_HASH_CONCURRENCY: '3',
  ROOMS_HASH_MAX_QUEUE: '20',
  ROOMS_WS_MAX_FRAMES_PER_S: '20',
  ROOMS_WS_FRAME_BURST: '40',
  ROOMS_WS_MAX_IN_FLIGHT: '4',
  ROOMS_ROOM_CREATE_LIMIT: '10',
  ROOMS_ROOM_CREATE_WINDOW_S: '3600',
  ROOMS_MAX_OPEN_ROOMS_PER_OWNER: '3',
  ROOMS_MEETING_CREATE_LIMIT: '4',
  ROOMS_MEETING_CREATE_WINDOW_S: '120',
  ROOMS_MAX_OPEN_MEETINGS_PER_HOST: '2',
  ROOMS_MEETING_INVITES_PER_USER: '30',
  ROOMS_MEETING_INVITE_WINDOW_S: '300',
  ROOMS_MEETING_INVITE_TOKENS_PER_MEETING: '40',
  ROOMS_MEETING_CHATS_PER_USER: '7',
  ROOMS_MEETING_CHAT_WINDOW_S: '5',
  ROOMS_MEETING_LOOKUP_FAILS_PER_USER: '9',
  ROOMS_MEETING_LOOKUP_FAILS_PER_ADDRESS: '0',
  ROOMS_MEETING_LOOKUP_FAILURE_WINDOW_S: '60',
  ROOMS_USER_LOOKUPS_PER_USER: '50',
  ROOMS_USER_LOOKUP_WINDOW_S: '30',
  ROOMS_LOG_LEVEL: 'debug',
};

const DEFAULT_MEDIA: Config['media'] = {
  embedded: true,
  none: false,
  serverId: 'media-1',
  url: 'http://127.0.0.1:7070',
  internalToken: null,
  timeoutMs: 5_000,
  closeRetry: 2,
  caps: {
    perUser: { transports: 6, producers: 4, consumers: 64 },
    perSocket: { transports: 8, producers: 8, consumers: 128 },
  },
  advertiseUrl: null,
  registrationTtlMs: 3_000,
  holderTtlMs: 15_000,
  turn: null,
  plainRtp: false,
  server: {
    host: '127.0.0.1',
    port: 7070,
    workers: availableParallelism(),
    workerBin: null,
    listenIp: '127.0.0.1',
    announcedAddress: null,
    rtcMinPort: 40000,
    rtcMaxPort: 49999,
    webRtcServerPort: null,
    workerLogLevel: 'warn',
    routerConsumers: 4000,
    edgeLingerMs: 10_000,
    pipeListenIp: null,
    pipeAnnouncedAddress: null,
    peerLostMs: 3_000,
    recordings: { dir: 'data/recordings', ffmpeg: 'ffmpeg', retentionMs: 2_592_000_000 },
  },
};

const DEFAULT_CELL: Config['cell'] = {
  leaseTtlMs: 10_000,
  snapshotEvery: 100,
  maxBatch: 256,
  commandLogRetentionMs: 604_800_000,
  requestIdRetentionMs: 604_800_000,
  idleAfterMs: 300_000,
  timerTickMs: 250,
  sweepIntervalMs: 2_000,
  drainTimeoutMs: 15_000,
};

/** The default node id as documented: the sanitised host name, a dash and the HTTP port. */
function defaultNodeId(httpPort: number): string {
  return `${hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 50)}-${httpPort}`;
}

/** `env` with every role (FULL_ENV's edge has no cells, which SQLite refuses). */
function embedded(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, ROOMS_ROLES: '', ROOMS_CELLS_ADDR: '' };
}

/** Runs `loadConfig(env)` and returns the ConfigError it must throw. */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.name, 'ConfigError');
    return error;
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

void describe('loadConfig', () => {
  void it('names an embedded media server after its node, a separate one media-1', () => {
    assert.equal(loadConfig({ ROOMS_NODE_ID: 'n-1' }).media.serverId, 'n-1-media');
    const separate = { ROOMS_MEDIA_EMBEDDED: 'false', ROOMS_MEDIA_INTERNAL_TOKEN: 'x'.repeat(16) };
    assert.equal(loadConfig(separate).media.serverId, 'media-1');
    assert.equal(loadConfig({ ...separate, ROOMS_MEDIA_SERVER_ID: 'm.2' }).media.serverId, 'm.2');
  });

  void it('hands TURN URLs out with their secret, never one without the other', () => {
    const urls =
      'turn:turn.example.com:3478?transport=udp, turns:turn.example.com:443?transport=tcp';
    const secret = 's'.repeat(32);
    assert.deepEqual(loadConfig({ ROOMS_TURN_URLS: urls, ROOMS_TURN_SECRET: secret }).media.turn, {
      urls: [
        'turn:turn.example.com:3478?transport=udp',
        'turns:turn.example.com:443?transport=tcp',
      ],
      secret,
      credentialTtlS: 86_400,
    });
    assert.throws(() => loadConfig({ ROOMS_TURN_URLS: urls }), /ROOMS_TURN_SECRET/);
    assert.throws(() => loadConfig({ ROOMS_TURN_SECRET: secret }), /ROOMS_TURN_URLS/);
  });

  void it('uses the documented defaults for an empty environment', () => {
    assert.deepEqual(loadConfig({}), {
      nodeId: defaultNodeId(8080),
      roles: { edge: true, cells: true, relay: true, media: true },
      cellsAddr: null,
      advertiseAddr: '127.0.0.1:9090',
      http: { host: '0.0.0.0', port: 8080, trustProxy: false, docsEnabled: true },
      grpcPort: 9090,
      db: { url: './data/rooms.sqlite', poolSize: 10 },
      redisUrl: null,
      keyPrefix: 'rooms:',
      cell: DEFAULT_CELL,
      accounts: {
        jwtSecret: null,
        jwtTtlS: 604_800,
        bcryptCost: 10,
        loginFailuresPerAccount: 10,
        loginFailuresPerAddress: 50,
        loginFailureWindowMs: 900_000,
        hashConcurrency: availableParallelism(),
        hashMaxQueue: 1_000,
      },
      media: { ...DEFAULT_MEDIA, serverId: `${defaultNodeId(8080)}-media` },
      grpc: { host: '127.0.0.1', forwardTimeoutMs: 5_000, token: null, tls: null },
      meeting: {
        emptyTtlMs: 300_000,
        hostGraceMs: 30_000,
        presenceTtlMs: 90_000,
        staleMs: 14_400_000,
        waitingTtlMs: 600_000,
        chatRetentionMs: 86_400_000,
      },
      notifications: { retentionMs: 2_592_000_000, maxPerUser: 1_000 },
      voice: {
        presenceTimeoutMs: 60_000,
        publishTimeoutMs: 15_000,
        announcedAudience: 200,
        seatApplicationTtlMs: 60_000,
        chatsPerUser: { limit: 5, windowMs: 1_000 },
        chatRetentionMs: 604_800_000,
        rankings: true,
        rankingTimeZone: 'UTC',
        maxSeats: 20,
        trtcApps: '',
        mediaCheckMs: 10_000,
      },
      admin: { token: null },
      outbox: {
        enabled: true,
        batchSize: 200,
        concurrency: 32,
        pollMs: 1_000,
        gatherMs: 20,
        lockMs: 60_000,
        maxAttempts: 12,
        retryBaseMs: 1_000,
        retryMaxMs: 600_000,
        webhookTimeoutMs: 5_000,
        webhookAllowPrivate: [],
        retentionMs: 604_800_000,
        failedRetentionMs: 2_592_000_000,
      },
      realtime: {
        maxBufferedBytes: 1_048_576,
        pingIntervalMs: 25_000,
        maxRoomsPerSocket: 50,
        coalesceMs: 5,
        maxFramesPerSecond: 50,
        frameBurst: 100,
        maxInFlight: 16,
      },
      quotas: {
        roomCreateLimit: 30,
        roomCreateWindowMs: 60_000,
        maxOpenRoomsPerOwner: 100,
        meetingCreateLimit: 30,
        meetingCreateWindowMs: 60_000,
        maxOpenMeetingsPerHost: 20,
        userLookupLimit: 1_000,
        userLookupWindowMs: 600_000,
      },
      meetingLimits: {
        invitesPerUser: { limit: 100, windowMs: 600_000 },
        inviteTokensPerMeeting: 100,
        chatsPerUser: { limit: 20, windowMs: 10_000 },
        lookupFailsPerUser: { limit: 20, windowMs: 600_000 },
        lookupFailsPerAddress: { limit: 100, windowMs: 600_000 },
      },
      logLevel: 'info',
    });
  });

  void it('derives a valid node id from the host name and the HTTP port', () => {
    const config = loadConfig({ ROOMS_HTTP_PORT: '8123' });
    assert.equal(config.nodeId, defaultNodeId(8123));
    assert.ok(config.nodeId.endsWith('-8123'), config.nodeId);
    // The derived id must itself satisfy the ROOMS_NODE_ID rule.
    assert.match(config.nodeId, /^[A-Za-z0-9._-]{1,64}$/);
    assert.equal(loadConfig({ ROOMS_NODE_ID: config.nodeId }).nodeId, config.nodeId);
  });

  void it('advertises 127.0.0.1 on the gRPC port when ROOMS_ADVERTISE_ADDR is unset', () => {
    assert.equal(loadConfig({ ROOMS_GRPC_PORT: '9444' }).advertiseAddr, '127.0.0.1:9444');
    assert.equal(
      loadConfig({ ROOMS_GRPC_PORT: '9444', ROOMS_ADVERTISE_ADDR: '10.0.0.7:9555' }).advertiseAddr,
      '10.0.0.7:9555',
    );
  });

  void it('parses every variable', () => {
    assert.deepEqual(loadConfig(FULL_ENV), {
      nodeId: 'node-a.1_x',
      roles: { edge: true, cells: false, relay: true, media: true },
      cellsAddr: 'rooms-cells.internal:9090',
      advertiseAddr: 'rooms-a.internal:7001',
      http: {
        host: '127.0.0.1',
        port: 8181,
        trustProxy: '10.0.0.0/8, 192.168.1.7',
        docsEnabled: false,
      },
      grpcPort: 9191,
      db: { url: 'mysql://rooms:secret@db.internal:3306/rooms', poolSize: 25 },
      redisUrl: 'redis://cache.internal:6380/2',
      keyPrefix: 'prod:',
      cell: {
        leaseTtlMs: 5_000,
        snapshotEvery: 50,
        maxBatch: 64,
        commandLogRetentionMs: 86_400_000,
        requestIdRetentionMs: 0,
        idleAfterMs: 60_000,
        timerTickMs: 100,
        sweepIntervalMs: 1_500,
        drainTimeoutMs: 7_000,
      },
      accounts: {
        jwtSecret: 'a-shared-secret-of-at-least-32-bytes!',
        jwtTtlS: 3_600,
        bcryptCost: 12,
        loginFailuresPerAccount: 5,
        loginFailuresPerAddress: 0,
        loginFailureWindowMs: 600_000,
        hashConcurrency: 3,
        hashMaxQueue: 20,
      },
      media: {
        embedded: false,
        none: false,
        serverId: 'media-a.1',
        url: 'http://media.internal:7171',
        internalToken: 'a-media-token-of-16+',
        timeoutMs: 2_500,
        closeRetry: 4,
        caps: {
          perUser: { transports: 3, producers: 2, consumers: 20 },
          perSocket: { transports: 6, producers: 5, consumers: 40 },
        },
        advertiseUrl: null,
        registrationTtlMs: 3_000,
        holderTtlMs: 15_000,
        turn: {
          urls: ['turns:turn.example.com:443?transport=tcp'],
          secret: 'a-turn-secret-of-16+',
          credentialTtlS: 600,
        },
        plainRtp: true,
        server: {
          host: '0.0.0.0',
          port: 7171,
          workers: 3,
          workerBin: '/opt/mediasoup-worker',
          listenIp: '0.0.0.0',
          announcedAddress: 'media.example.com',
          rtcMinPort: 41000,
          rtcMaxPort: 41999,
          webRtcServerPort: 44440,
          workerLogLevel: 'warn',
          routerConsumers: 250,
          edgeLingerMs: 0,
          pipeListenIp: '10.0.0.5',
          pipeAnnouncedAddress: 'media-1.internal',
          peerLostMs: 1500,
          recordings: { dir: 'data/recordings', ffmpeg: 'ffmpeg', retentionMs: 2_592_000_000 },
        },
      },
      grpc: {
        host: '127.0.0.2',
        forwardTimeoutMs: 2_500,
        token: 'a-cluster-grpc-token-of-32-chars!',
        tls: {
          certFile: '/etc/rooms/node.pem',
          keyFile: '/etc/rooms/node.key',
          caFile: '/etc/rooms/ca.pem',
        },
      },
      meeting: {
        emptyTtlMs: 120_000,
        hostGraceMs: 5_000,
        presenceTtlMs: 45_000,
        staleMs: 3_600_000,
        waitingTtlMs: 120_000,
        chatRetentionMs: 0,
      },
      notifications: { retentionMs: 3_600_000, maxPerUser: 0 },
      voice: {
        presenceTimeoutMs: 30_000,
        publishTimeoutMs: 9_000,
        announcedAudience: 0,
        seatApplicationTtlMs: 30_000,
        chatsPerUser: { limit: 9, windowMs: 3_000 },
        chatRetentionMs: 0,
        rankings: false,
        rankingTimeZone: 'Asia/Shanghai',
        maxSeats: 12,
        trtcApps: '1400000001:default:key-one, 1400000002:shop:key:two',
        mediaCheckMs: 2_500,
      },
      admin: { token: 'an-admin-token-0123' },
      outbox: {
        enabled: false,
        batchSize: 50,
        concurrency: 4,
        pollMs: 250,
        gatherMs: 20,
        lockMs: 20_000,
        maxAttempts: 7,
        retryBaseMs: 500,
        retryMaxMs: 30_000,
        webhookTimeoutMs: 3_000,
        webhookAllowPrivate: ['10.20.0.0/16', 'fd00::/8', '127.0.0.1', 'hooks.internal'],
        retentionMs: 86_400_000,
        failedRetentionMs: 0,
      },
      realtime: {
        maxBufferedBytes: 262_144,
        pingIntervalMs: 10_000,
        maxRoomsPerSocket: 5,
        coalesceMs: 0,
        maxFramesPerSecond: 20,
        frameBurst: 40,
        maxInFlight: 4,
      },
      quotas: {
        roomCreateLimit: 10,
        roomCreateWindowMs: 3_600_000,
        maxOpenRoomsPerOwner: 3,
        meetingCreateLimit: 4,
        meetingCreateWindowMs: 120_000,
        maxOpenMeetingsPerHost: 2,
        userLookupLimit: 50,
        userLookupWindowMs: 30_000,
      },
      meetingLimits: {
        invitesPerUser: { limit: 30, windowMs: 300_000 },
        inviteTokensPerMeeting: 40,
        chatsPerUser: { limit: 7, windowMs: 5_000 },
        lookupFailsPerUser: { limit: 9, windowMs: 60_000 },
        lookupFailsPerAddress: { limit: 0, windowMs: 60_000 },
      },
      logLevel: 'debug',
    });
  });

  void it('accepts SQLite paths and sqlite:// URLs, and rediss:// for Redis', () => {
    for (const url of ['/var/lib/rooms/rooms.sqlite', 'rooms.db', 'sqlite://./x.sqlite']) {
      assert.equal(loadConfig({ ROOMS_DB_URL: url }).db.url, url);
    }
    const redis = { ROOMS_REDIS_URL: 'rediss://r:6379', ROOMS_GRPC_TOKEN: 't'.repeat(32) };
    assert.equal(loadConfig(redis).redisUrl, 'rediss://r:6379');
  });

  void it('accepts the numeric bounds', () => {
    const low = loadConfig({
      ROOMS_HTTP_PORT: '0',
      ROOMS_GRPC_PORT: '65535',
      ROOMS_LEASE_TTL_MS: '300',
      ROOMS_DB_POOL_SIZE: '1',
      ROOMS_MAX_BATCH: '1000',
    });
    assert.equal(low.http.port, 0);
    assert.equal(low.grpcPort, 65535);
    assert.equal(low.cell.leaseTtlMs, 300);
    assert.equal(low.db.poolSize, 1);
    assert.equal(low.cell.maxBatch, 1000);
    assert.equal(loadConfig({ ROOMS_HTTP_TRUST_PROXY: 'true' }).http.trustProxy, true);
    assert.equal(loadConfig({ ROOMS_HTTP_TRUST_PROXY: '2' }).http.trustProxy, 2);
    assert.equal(loadConfig({ ROOMS_HTTP_TRUST_PROXY: '::1' }).http.trustProxy, '::1');
  });

  void it('treats empty strings as unset', () => {
    const empty = Object.fromEntries(Object.keys(FULL_ENV).map((k) => [k, '']));
    assert.deepEqual(loadConfig(empty), loadConfig({}));
    // In particular an empty port is not coerced to 0, nor an empty Redis URL to a cluster.
    const config = loadConfig({ ROOMS_HTTP_PORT: '', ROOMS_REDIS_URL: '', ROOMS_NODE_ID: '' });
    assert.equal(config.http.port, 8080);
    assert.equal(config.redisUrl, null);
    assert.equal(config.nodeId, defaultNodeId(8080));
  });

  void it('ignores variables without the ROOMS_ prefix', () => {
    const config = loadConfig({
      PORT: 'abc',
      HTTP_PORT: 'abc',
      REDIS_URL: 'http://x',
      rooms_http_port: 'abc',
      XROOMS_HTTP_PORT: '1',
      NODE_ID: 'a b',
      PATH: '/usr/bin',
    });
    assert.deepEqual(config, loadConfig({}));
  });

  void it('reads only the environment it is given', () => {
    const saved = process.env.ROOMS_HTTP_PORT;
    process.env.ROOMS_HTTP_PORT = 'abc';
    try {
      assert.equal(loadConfig({}).http.port, 8080);
    } finally {
      if (saved === undefined) delete process.env.ROOMS_HTTP_PORT;
      else process.env.ROOMS_HTTP_PORT = saved;
    }
  });

  void it('returns a deeply frozen object', () => {
    const config = loadConfig(FULL_ENV);
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.http));
    assert.ok(Object.isFrozen(config.db));
    assert.ok(Object.isFrozen(config.cell));
    const mutable = config as unknown as {
      nodeId: string;
      http: { port: number };
      cell: { leaseTtlMs: number };
    };
    assert.throws(() => {
      mutable.nodeId = 'other';
    }, TypeError);
    assert.throws(() => {
      mutable.http.port = 1;
    }, TypeError);
    assert.throws(() => {
      mutable.cell.leaseTtlMs = 1;
    }, TypeError);
    assert.equal(config.nodeId, 'node-a.1_x');
    assert.equal(config.http.port, 8181);
    assert.equal(config.cell.leaseTtlMs, 5_000);
  });

  void describe('rejects bad values with a ConfigError naming the variable', () => {
    const cases: [name: string, value: string][] = [
      ['ROOMS_HTTP_PORT', 'abc'],
      ['ROOMS_HTTP_PORT', '65536'],
      ['ROOMS_HTTP_PORT', '-1'],
      ['ROOMS_HTTP_PORT', '80.5'],
      ['ROOMS_GRPC_PORT', 'x'],
      ['ROOMS_DB_URL', 'postgres://x'],
      ['ROOMS_DB_URL', 'http://db/rooms'],
      ['ROOMS_DB_POOL_SIZE', '0'],
      ['ROOMS_REDIS_URL', 'http://x'],
      ['ROOMS_REDIS_URL', 'localhost:6379'],
      ['ROOMS_LEASE_TTL_MS', '5'],
      ['ROOMS_LEASE_TTL_MS', '299'],
      ['ROOMS_SNAPSHOT_EVERY', '0'],
      ['ROOMS_MAX_BATCH', '1001'],
      ['ROOMS_IDLE_AFTER_MS', '999'],
      ['ROOMS_TIMER_TICK_MS', '9'],
      ['ROOMS_SWEEP_INTERVAL_MS', '99'],
      ['ROOMS_DRAIN_TIMEOUT_MS', 'soon'],
      ['ROOMS_ROLES', 'edge,cell'],
      ['ROOMS_ROLES', 'edge,,relay'],
      ['ROOMS_ROLES', ' , '],
      ['ROOMS_ROLES', 'EDGE'],
      ['ROOMS_CELLS_ADDR', 'http://lb:9090'],
      ['ROOMS_CELLS_ADDR', 'lb'],
      ['ROOMS_NODE_ID', 'a b'],
      ['ROOMS_NODE_ID', 'a:b'],
      ['ROOMS_NODE_ID', 'n'.repeat(65)],
      ['ROOMS_ADVERTISE_ADDR', 'no-port'],
      ['ROOMS_ADVERTISE_ADDR', 'host:port'],
      ['ROOMS_ADVERTISE_ADDR', 'host:99999'],
      ['ROOMS_MAX_SEATS', '0'],
      ['ROOMS_MEETING_EMPTY_TTL_MS', '999'],
      ['ROOMS_MEETING_PRESENCE_TTL_MS', '999'],
      ['ROOMS_MEETING_STALE_MS', '1.5'],
      ['ROOMS_MEETING_CHAT_RETENTION_MS', '59999'],
      ['ROOMS_VOICE_CHAT_RETENTION_MS', '59999'],
      ['ROOMS_VOICE_RANKING_TIME_ZONE', 'Mars/Olympus'],
      ['ROOMS_VOICE_RANKINGS', 'on'],
      ['ROOMS_MEETING_CHAT_RETENTION_MS', '-1'],
      ['ROOMS_NOTIFICATION_RETENTION_MS', '3599999'],
      ['ROOMS_NOTIFICATION_RETENTION_MS', '30d'],
      ['ROOMS_NOTIFICATION_MAX_PER_USER', '-1'],
      ['ROOMS_NOTIFICATION_MAX_PER_USER', '1000001'],
      ['ROOMS_ADMIN_TOKEN', 'short'],
      ['ROOMS_TURN_URLS', 'stun:turn.example.com'],
      ['ROOMS_TURN_URLS', 'turn:a.example,https://b.example'],
      ['ROOMS_TURN_SECRET', 'short'],
      ['ROOMS_TURN_CREDENTIAL_TTL_S', '59'],
      ['ROOMS_TRTC_APPS', 'abc:default:key'],
      ['ROOMS_TRTC_APPS', '1400000001:default'],
      ['ROOMS_PRESENCE_TIMEOUT_MS', '10'],
      ['ROOMS_LOG_LEVEL', 'verbose'],
      ['ROOMS_JWT_SECRET', 'too-short'],
      ['ROOMS_JWT_SECRET', 'é'.repeat(15)], // 30 bytes
      ['ROOMS_JWT_TTL_S', '59'],
      ['ROOMS_JWT_TTL_S', '1h'],
      ['ROOMS_BCRYPT_COST', '3'],
      ['ROOMS_BCRYPT_COST', '16'],
      ['ROOMS_OUTBOX_ENABLED', 'yes'],
      ['ROOMS_OUTBOX_BATCH', '0'],
      ['ROOMS_OUTBOX_LOCK_MS', '999'],
      ['ROOMS_OUTBOX_LOCK_MS', '5999'], // under twice ROOMS_WEBHOOK_TIMEOUT_MS (3000)
      ['ROOMS_WEBHOOK_TIMEOUT_MS', '99'],
      ['ROOMS_WEBHOOK_ALLOW_PRIVATE', '10.0.0.0/33'],
      ['ROOMS_WEBHOOK_ALLOW_PRIVATE', 'http://127.0.0.1/'],
      ['ROOMS_OUTBOX_RETENTION_MS', '-1'],
      ['ROOMS_OUTBOX_DEAD_RETENTION_MS', '7d'],
      ['ROOMS_WS_MAX_BUFFER_BYTES', '1023'],
      ['ROOMS_WS_PING_INTERVAL_MS', '99'],
      ['ROOMS_WS_MAX_ROOMS', '0'],
      ['ROOMS_WS_COALESCE_MS', '101'],
      ['ROOMS_WS_COALESCE_MS', '2.5'],
      ['ROOMS_GRPC_TOKEN', 'x'.repeat(31)],
      ['ROOMS_GRPC_TOKEN', 'é'.repeat(32)], // not ASCII: no gRPC metadata value
      ['ROOMS_GRPC_TOKEN', 'a token with spaces, long enough to pass'],
      ['ROOMS_GRPC_TLS_CERT', ''], // unset while _KEY and _CA are set
      ['ROOMS_GRPC_TLS_CA', ''],
      ['ROOMS_HTTP_TRUST_PROXY', 'yes'],
      ['ROOMS_HTTP_TRUST_PROXY', '10.0.0.0/8,proxy.internal'],
      ['ROOMS_DOCS_ENABLED', 'no'],
      ['ROOMS_LOGIN_FAILS_PER_ACCOUNT', '-1'],
      ['ROOMS_LOGIN_FAILURE_WINDOW_S', '0'],
      ['ROOMS_HASH_CONCURRENCY', '0'],
      ['ROOMS_HASH_MAX_QUEUE', 'many'],
      ['ROOMS_WS_MAX_FRAMES_PER_S', '0'],
      ['ROOMS_WS_FRAME_BURST', '0'],
      ['ROOMS_WS_MAX_IN_FLIGHT', '0'],
      ['ROOMS_ROOM_CREATE_LIMIT', '1.5'],
      ['ROOMS_ROOM_CREATE_WINDOW_S', '0'],
      ['ROOMS_MAX_OPEN_ROOMS_PER_OWNER', '-3'],
      ['ROOMS_MEDIA_USER_MAX_TRANSPORTS', '1'],
      ['ROOMS_MEDIA_USER_MAX_CONSUMERS', '13'],
      ['ROOMS_MEDIA_SOCKET_MAX_TRANSPORTS', '2'],
      ['ROOMS_MEDIA_SOCKET_MAX_PRODUCERS', '1'],
      ['ROOMS_MEDIA_SOCKET_MAX_CONSUMERS', '19'],
    ];
    for (const [name, value] of cases) {
      void it(`${name}=${JSON.stringify(value)}`, () => {
        const error = configError({ ...FULL_ENV, [name]: value });
        assert.ok(error.message.includes(name), `message does not name ${name}: ${error.message}`);
        // Only the bad variable is reported.
        const named = Object.keys(FULL_ENV).filter((k) => error.message.includes(`${k}:`));
        assert.deepEqual(named, [name], error.message);
      });
    }

    void it('ROOMS_JWT_SECRET unset with a mysql:// database (cluster mode)', () => {
      const { ROOMS_JWT_SECRET: _, ...withoutSecret } = FULL_ENV;
      const error = configError(withoutSecret);
      assert.match(error.message, /ROOMS_JWT_SECRET: required with a mysql:\/\/ ROOMS_DB_URL/);
      // Embedded (SQLite) mode generates one instead.
      assert.equal(
        loadConfig({ ...embedded(withoutSecret), ROOMS_DB_URL: './x.sqlite' }).accounts.jwtSecret,
        null,
      );
    });

    void it('ROOMS_GRPC_TOKEN unset in cluster mode (mysql:// or Redis)', () => {
      const { ROOMS_GRPC_TOKEN: _, ...withoutToken } = FULL_ENV;
      const clusters = [
        withoutToken,
        { ...withoutToken, ROOMS_REDIS_URL: '' },
        { ...withoutToken, ROOMS_DB_URL: './x.sqlite' },
        { ROOMS_REDIS_URL: 'redis://127.0.0.1:6379' },
      ];
      for (const env of clusters) {
        const error = configError(env);
        assert.match(error.message, /ROOMS_GRPC_TOKEN: required in cluster mode/);
      }
    });

    void it('ROOMS_MEDIA_USER_MAX_CONSUMERS below ROOMS_MAX_SEATS: a listener hears every seat', () => {
      const error = configError({ ...FULL_ENV, ROOMS_MAX_SEATS: '30' });
      assert.match(
        error.message,
        /ROOMS_MEDIA_USER_MAX_CONSUMERS: at least ROOMS_MAX_SEATS \(30\): a listener hears every seat/,
      );
    });

    void it('reports every bad variable at once', () => {
      const error = configError({ ROOMS_HTTP_PORT: 'abc', ROOMS_REDIS_URL: 'http://x' });
      assert.match(error.message, /ROOMS_HTTP_PORT/);
      assert.match(error.message, /ROOMS_REDIS_URL/);
    });
  });

  void describe('ROOMS_ROLES', () => {
    const cluster = {
      ROOMS_DB_URL: 'mysql://root@127.0.0.1:3306/rooms',
      ROOMS_REDIS_URL: 'redis://127.0.0.1:6379',
      ROOMS_JWT_SECRET: 's'.repeat(32),
      ROOMS_GRPC_TOKEN: 't'.repeat(32),
    };
    const rolesOf = (env: NodeJS.ProcessEnv) => loadConfig({ ...cluster, ...env }).roles;

    void it('runs all four by default; a list picks (spaces, order and repeats do not matter)', () => {
      assert.deepEqual(rolesOf({}), { edge: true, cells: true, relay: true, media: true });
      assert.deepEqual(rolesOf({ ROOMS_ROLES: 'edge,cells,relay,media' }), rolesOf({}));
      assert.deepEqual(rolesOf({ ROOMS_ROLES: ' cells , edge,cells' }), {
        edge: true,
        cells: true,
        relay: false,
        media: false,
      });
      assert.deepEqual(rolesOf({ ROOMS_ROLES: 'relay' }), {
        edge: false,
        cells: false,
        relay: true,
        media: false,
      });
    });

    void it('refuses an unknown or empty role, naming the value', () => {
      for (const value of ['edge,gateway', 'edge,', ',', 'cells media']) {
        const error = configError({ ...cluster, ROOMS_ROLES: value });
        assert.match(error.message, /ROOMS_ROLES: unknown role/);
        assert.ok(error.message.includes(JSON.stringify(value)), error.message);
      }
      assert.match(configError({ ROOMS_ROLES: 'edge,gateway' }).message, /"gateway"/);
    });

    void it('refuses a role set without cells on embedded SQLite: nobody could own a room', () => {
      for (const roles of ['edge', 'relay', 'media', 'edge,relay,media']) {
        const error = configError({ ROOMS_DB_URL: './x.sqlite', ROOMS_ROLES: roles });
        assert.match(error.message, /ROOMS_ROLES: .* without cells needs the cluster backend/);
      }
      assert.equal(
        loadConfig({ ROOMS_DB_URL: './x.sqlite', ROOMS_ROLES: 'cells' }).roles.cells,
        true,
      );
    });

    void it('refuses an edge without cells and without Redis', () => {
      const { ROOMS_REDIS_URL: _, ...noRedis } = cluster;
      const error = configError({ ...noRedis, ROOMS_ROLES: 'edge,relay' });
      assert.match(
        error.message,
        /ROOMS_ROLES: "edge,relay" \(an edge without cells\) needs ROOMS_REDIS_URL/,
      );
      // A relay-only node needs neither cells nor Redis.
      assert.equal(loadConfig({ ...noRedis, ROOMS_ROLES: 'relay' }).roles.relay, true);
    });

    void it('takes ROOMS_CELLS_ADDR only on an edge without cells', () => {
      const addr = { ROOMS_CELLS_ADDR: 'rooms-cells.internal:9090' };
      assert.equal(
        loadConfig({ ...cluster, ...addr, ROOMS_ROLES: 'edge' }).cellsAddr,
        addr.ROOMS_CELLS_ADDR,
      );
      assert.equal(loadConfig({ ...cluster, ROOMS_ROLES: 'edge' }).cellsAddr, null);
      assert.match(
        configError({ ...cluster, ...addr }).message,
        /ROOMS_CELLS_ADDR: only for a node without the cells role/,
      );
      assert.match(
        configError({ ...cluster, ...addr, ROOMS_ROLES: 'relay' }).message,
        /ROOMS_CELLS_ADDR: only for an edge node/,
      );
    });

    void it('the relay role runs the outbox relay; media runs the embedded media server', () => {
      const config = loadConfig({ ...cluster, ROOMS_ROLES: 'edge,cells' });
      assert.equal(config.outbox.enabled, false);
      assert.deepEqual([config.media.embedded, config.media.none], [false, true]);
      assert.equal(loadConfig({ ...cluster, ROOMS_ROLES: 'cells,relay' }).outbox.enabled, true);
      // Without the media role a separate media server may still be named (with its token).
      const remote = { ROOMS_MEDIA_URL: 'http://media.internal:7070' };
      assert.match(
        configError({ ...cluster, ...remote, ROOMS_ROLES: 'edge,cells' }).message,
        /ROOMS_MEDIA_INTERNAL_TOKEN: required with ROOMS_MEDIA_URL on a node without the media role/,
      );
      const withToken = { ...cluster, ...remote, ROOMS_MEDIA_INTERNAL_TOKEN: 'm'.repeat(16) };
      const separate = loadConfig({ ...withToken, ROOMS_ROLES: 'edge,cells' }).media;
      assert.deepEqual(
        [separate.embedded, separate.none, separate.url],
        [false, false, remote.ROOMS_MEDIA_URL],
      );
      assert.equal(loadConfig({ ...cluster, ROOMS_ROLES: 'cells,media' }).media.embedded, true);
    });
  });

  void it('ROOMS_GRPC_TOKEN: optional in embedded mode (SQLite, no Redis), gRPC on loopback', () => {
    // Unset: the node makes up a random token per start (src/edge/grpc/grpc-embedded.int.test.ts).
    assert.equal(loadConfig({ ROOMS_DB_URL: './x.sqlite' }).grpc.token, null);
    const config = loadConfig({ ROOMS_GRPC_TOKEN: 't'.repeat(32) });
    assert.equal(config.grpc.token, 't'.repeat(32));
    assert.equal(config.grpc.host, '127.0.0.1');
    assert.equal(config.grpc.tls, null);
  });
});
