/**
 * The composition root: picks the adapters the config names and wires one node. Nothing
 * else in the code base chooses an adapter.
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { collectDefaultMetrics } from 'prom-client';
import { resolveJwtSecret } from '../accounts/secret.js';
import type { AccountsService } from '../accounts/service.js';
import { MemoryLeaseManager } from '../adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../adapters/memory/memory-node-registry.js';
import { MemoryRateLimiter } from '../adapters/memory/memory-rate-limiter.js';
import { createRedisClient } from '../adapters/redis/redis-client.js';
import { RedisLeaseManager } from '../adapters/redis/redis-lease.js';
import { RedisNodeRegistry } from '../adapters/redis/redis-node-registry.js';
import { RedisRateLimiter } from '../adapters/redis/redis-rate-limiter.js';
import { openSqlBackend, sqlFlavorOf, type SqlBackend } from '../adapters/sql/database.js';
import { SqlCellStore } from '../adapters/sql/sql-cell-store.js';
import type { SqlStoreTypes } from '../adapters/sql/sql-store-types.js';
import type { CommittedBatch } from '../cell/cell-events.js';
import type { NotificationCentre } from '../notifications/notification-centre.js';
import type { NotificationRetention } from '../notifications/notification-retention.js';
import type { Reactor } from '../cell/reactions.js';
import { CellHost } from '../cell/host.js';
import type { LeaseManager, NodeRegistry } from '../cell/lease.js';
import type { MediaRouterJanitor } from '../media-cluster/router-janitor.js';
import { systemClock } from '../shared/clock.js';
import type { RateLimiter } from '../shared/rate-limiter.js';
import { wireAccounts } from './accounts.js';
import type { Config } from './config.js';
import type { Delivery, DeliveryPlugins } from './delivery.js';
import { embeddedMediaLoad, registerMediaMetrics, remoteMediaLoad } from './media-metrics.js';
import type { VoiceRooms } from '../voice-room/wiring/voice-rooms.js';
import { edgeCellsTier, startCellsService } from './node-roles.js';
import type { VoiceMedia } from '../voice-room/wiring/voice-media.js';
import { wireMedia, wireRoomsMedia, type NodeMedia } from './node-media.js';
import { wireMediaDirectory } from './media-cluster.js';
import type { Meetings } from '../meeting/wiring/meetings.js';
import { meetingMembership } from '../meeting/api/membership.js';
import type { MeetingSignalling } from '../meeting/signalling/signalling.js';
import { MemoryKeyValue } from '../adapters/memory/memory-key-value.js';
import { RedisKeyValue } from '../adapters/redis/redis-key-value.js';
import type { KeyValue } from '../shared/key-value.js';
import { buildNodeHttp, nodeOutbox, serveNode, wireNodeDelivery } from './node-http.js';
import { wireRooms } from './node-rooms.js';
import { startNodeSweeps } from './node-sweeps.js';

export interface RoomsNode {
  readonly host: CellHost;
  readonly http: FastifyInstance;
  readonly sql: SqlBackend;
  /** The voice-room API (also served over gRPC on `voice.grpcPort`). */
  readonly voice: VoiceRooms;
  /** The meeting API (REST /api/v1/meeting; forwarded between nodes by gRPC MeetingCall). */
  readonly meetings: Meetings;
  /** Users and tokens: `authenticate(token)` for the WebSocket hub and REST guards. */
  readonly accounts: AccountsService;
  /** The media server (embedded, or the one at ROOMS_MEDIA_URL) and its client. */
  readonly media: NodeMedia;
  /** Closes the routers of ended meetings left open (e.g. the owner died before closing). */
  readonly routerJanitor: MediaRouterJanitor;
  /** Realtime bus, WebSocket hub (`/ws`) and outbox relay. */
  readonly delivery: Delivery;
  /** The notification centre (the meeting invite's `pushBatch`). */
  readonly notifications: NotificationCentre;
  /** Voice rooms' audio: `voice.*` signalling, producer checks, media events → RTC commands. */
  readonly voiceMedia: VoiceMedia;
  /** Post-commit reactions: the fast path after this node's commits, and the relay. */
  readonly reactions: Reactor;
  /** The meetings' WebSocket signalling (this node's presence notices to the meetings). */
  readonly meetingSignalling: MeetingSignalling;
  /** Deletes old notifications and caps each recipient's (`ROOMS_NOTIFICATION_*`); started with the relay role. */
  readonly notificationRetention: NotificationRetention;
  /** The HTTP address actually bound (port 0 picks a free one). */
  readonly httpAddress: string;
  /** Drains the host, then closes HTTP, SQL and Redis. Idempotent. */
  close(): Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino({ level: config.logLevel, base: { node: config.nodeId } });
}

export async function startNode(
  config: Config,
  logger = createLogger(config),
  plugins: DeliveryPlugins = {},
): Promise<RoomsNode> {
  const closers: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    // First: in cluster mode a missing secret fails before any connection is opened.
    const jwtSecret = await resolveJwtSecret({
      configured: config.accounts.jwtSecret,
      flavor: sqlFlavorOf(config.db.url),
      dbUrl: config.db.url,
      logger,
    });
    const sql = await openSqlBackend(config.db.url, { poolSize: config.db.poolSize });
    closers.push(() => sql.close());
    const { lease, registry, limiter, kv, redis } = coordination(config, logger, closers);
    // An edge without cells sends every call to the cells tier; null on a cells node.
    const tier = edgeCellsTier(config, { lease, registry });
    // Closed after the host drains (closers run in reverse): meetings may close routers then.
    const media = await wireMedia(config, logger, closers);
    const { servers: mediaServers, directory } = await wireMediaDirectory(
      config,
      media,
      redis,
      logger,
      closers,
    );
    let delivery: Delivery | null = null;
    let reactor: Reactor | null = null;
    const { host, hostConfig } = createCellHost(
      config,
      sql,
      { lease, registry },
      logger,
      (batch) => {
        delivery?.onCommitted(batch);
        reactor?.onCommitted(batch);
      },
    );
    registerNodeMetrics(config, host, media);
    const base = { config, logger, sql, redis, host, media, mediaServers };
    const accounts = wireAccounts(config, sql, limiter, jwtSecret);
    const rooms = wireRooms(
      { ...base, kv, limiter, cellsTier: tier, delivery: () => delivery },
      closers,
    );
    const { voice, notifications, notificationRetention, meetings } = rooms;
    const routerJanitor = startNodeSweeps({ ...base, meetings, notificationRetention }, closers);
    const outbox = nodeOutbox(config, sql);
    const http = buildNodeHttp({ ...base, ...rooms, accounts, outbox });
    const advertiseAddr = await startCellsService(config, voice, meetings, logger);
    const membership = meetingMembership(meetings.api, meetings.limits);
    const wired = wireNodeDelivery({ ...base, http, outbox, accounts, voice, membership, plugins });
    delivery = wired;
    const onReactor = (created: Reactor) => {
      reactor = created;
    };
    const {
      signalling,
      voiceAudio,
      reactor: reactions,
    } = await wireRoomsMedia(
      { ...base, directory, meetings, voice, membership, delivery: wired, onReactor },
      closers,
    );
    if (advertiseAddr) hostConfig.advertiseAddr = advertiseAddr;
    const httpAddress = await serveNode(config, { host, http, delivery: wired }, closers);

    let closing: Promise<void> | undefined;
    return {
      media,
      routerJanitor,
      host,
      http,
      sql,
      accounts,
      voice,
      meetings,
      delivery: wired,
      notifications,
      meetingSignalling: signalling.signalling,
      voiceMedia: voiceAudio,
      reactions,
      notificationRetention,
      httpAddress,
      close: () => (closing ??= closeAll()),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The cell host; `hostConfig.advertiseAddr` is set once the cells service listens. */
function createCellHost(
  config: Config,
  sql: SqlBackend,
  { lease, registry }: { lease: LeaseManager; registry: NodeRegistry },
  logger: Logger,
  onCommitted: (batch: CommittedBatch) => void,
): { host: CellHost<SqlStoreTypes>; hostConfig: { advertiseAddr: string } } {
  const hostConfig = {
    nodeId: config.nodeId,
    advertiseAddr: config.advertiseAddr,
    ...config.cell,
    ownsCells: config.roles.cells,
  };
  const host = new CellHost(hostConfig, {
    store: new SqlCellStore(sql, { logger: logger.child({ module: 'cell-store' }) }),
    lease,
    registry,
    clock: systemClock,
    logger,
    onCommitted,
  });
  return { host, hostConfig };
}

/** The process's default metrics and the media server's load, on the host's registry. */
function registerNodeMetrics(config: Config, host: CellHost, media: NodeMedia): void {
  collectDefaultMetrics({ register: host.metrics.registry });
  const { orchestrator } = media;
  registerMediaMetrics(
    host.metrics.registry,
    config.media.serverId,
    config.media.embedded || !orchestrator
      ? embeddedMediaLoad(media.server)
      : remoteMediaLoad(() => orchestrator.serverInfo()),
  );
}

/** Redis when configured (cluster: leases and rate counters shared), else in-process. */
function coordination(
  config: Config,
  logger: Logger,
  closers: (() => Promise<unknown>)[],
): {
  lease: LeaseManager;
  registry: NodeRegistry;
  limiter: RateLimiter;
  kv: KeyValue;
  redis: Redis | null;
} {
  if (!config.redisUrl) {
    if (sqlFlavorOf(config.db.url) === 'mysql') {
      logger.warn('ROOMS_REDIS_URL is unset: run a single node, or set it to run several');
    }
    return {
      lease: new MemoryLeaseManager({ clock: systemClock }),
      registry: new MemoryNodeRegistry({ clock: systemClock }),
      limiter: new MemoryRateLimiter({ clock: systemClock }),
      kv: new MemoryKeyValue({ clock: systemClock }),
      redis: null,
    };
  }
  const redis = createRedisClient(
    config.redisUrl,
    { maxRetriesPerRequest: 2, enableAutoPipelining: true },
    logger,
    'coordination',
  );
  closers.push(() => redis.quit());
  return {
    lease: new RedisLeaseManager({ redis, keyPrefix: config.keyPrefix }),
    registry: new RedisNodeRegistry({ redis, keyPrefix: config.keyPrefix }),
    limiter: new RedisRateLimiter({ redis, keyPrefix: config.keyPrefix }),
    kv: new RedisKeyValue({ redis, keyPrefix: config.keyPrefix }),
    redis,
  };
}
