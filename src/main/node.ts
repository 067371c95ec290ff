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
import { SqlNotificationStore } from '../adapters/sql/notifications/sql-notification-store.js';
import { NotificationCentre } from '../notifications/notification-centre.js';
import { sqlNotificationRetentionStore } from '../adapters/sql/notifications/notification-retention.js';
import { NotificationRetention } from '../notifications/notification-retention.js';
import { sqlLogRetentionStore } from '../adapters/sql/log-retention-store.js';
import { LogRetention } from '../cell/log-retention.js';
import { Reactor } from '../cell/reactions.js';
import { sqlReactionStore } from '../adapters/sql/reaction-store.js';
import { CellHost } from '../cell/host.js';
import type { CellKey, LeaseManager, NodeRegistry } from '../cell/lease.js';
import { httpLogSerializers } from '../edge/http/log-redaction.js';
import { followRouterCaches } from '../meeting/router-cache.js';
import { MediaRouterJanitor } from '../meeting/router-janitor.js';
import { sqlEndedRooms } from '../adapters/sql/ended-rooms.js';
import { sqlRoomFrameLog } from '../adapters/sql/room-frame-log.js';
import { DestinationPolicy } from '../outbox/destinations.js';
import { SqlOutboxStore } from '../outbox/sql-outbox-store.js';
import { SqlWebhookDirectory } from '../outbox/webhooks.js';
import { systemClock } from '../shared/clock.js';
import type { RateLimiter } from '../shared/rate-limiter.js';
import { wireAccounts } from './accounts.js';
import type { Config } from './config.js';
import { wireDelivery, type Delivery, type DeliveryPlugins } from './delivery.js';
import { buildHttpApp } from './http-app.js';
import { defaultWebDist } from '../edge/http/web-client.js';
import { wireAdminInspection } from './admin-inspection.js';
import { embeddedMediaLoad, registerMediaMetrics, remoteMediaLoad } from './media-metrics.js';
import { nodeControl, nodeReadiness } from './node-ops.js';
import { voiceRoomFollowers, voiceRoomFrames } from '../edge/voice/voice-frames.js';
import { wireVoiceRooms, type VoiceRooms } from './voice-rooms.js';
import { edgeCellsTier, startCellsService, startRelaySweeps } from './node-roles.js';
import { wireMeetingMedia } from './meeting-media.js';
import { wireVoiceMedia, type VoiceMedia } from './voice-media.js';
import { followMediaEvents } from './media-events.js';
import { wireMedia, type NodeMedia } from './node-media.js';
import {
  ownMediaServerId,
  wireMediaDirectory,
  sweepOrphanMedia,
  wireMediaFailover,
  wireMediaHolders,
} from './media-cluster.js';
import { MemoryRoomMediaState } from '../adapters/memory/memory-meeting-media.js';
import { RedisRoomMediaState } from '../adapters/redis/redis-meeting-media.js';
import { MediaRecords } from '../edge/room-media/media-records.js';
import { meetingMediaRules } from '../edge/meeting-ws/media-rules.js';
import { voiceMediaRules } from '../edge/voice-ws/media-rules.js';
import { wireMeetings, type Meetings } from './meetings.js';
import { meetingFrames } from '../edge/meeting/meeting-frames.js';
import { meetingMembership } from '../edge/meeting/membership.js';
import type { MeetingSignalling } from '../edge/meeting-ws/signalling.js';
import type { CanFollow } from '../edge/ws/hub.js';
import { MemoryKeyValue } from '../adapters/memory/memory-key-value.js';
import { RedisKeyValue } from '../adapters/redis/redis-key-value.js';
import type { KeyValue } from '../shared/key-value.js';

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
    const hostConfig = {
      nodeId: config.nodeId,
      advertiseAddr: config.advertiseAddr,
      ...config.cell,
      ownsCells: config.roles.cells,
    };
    let delivery: Delivery | null = null;
    let reactor: Reactor | null = null;
    const host = new CellHost(hostConfig, {
      store: new SqlCellStore(sql, { logger: logger.child({ module: 'cell-store' }) }),
      lease,
      registry,
      clock: systemClock,
      logger,
      onCommitted: (batch) => {
        delivery?.onCommitted(batch);
        reactor?.onCommitted(batch);
      },
    });
    collectDefaultMetrics({ register: host.metrics.registry });
    const { orchestrator } = media;
    registerMediaMetrics(
      host.metrics.registry,
      config.media.serverId,
      config.media.embedded || !orchestrator
        ? embeddedMediaLoad(media.server)
        : remoteMediaLoad(() => orchestrator.serverInfo()),
    );
    const accounts = wireAccounts(config, sql, limiter, jwtSecret);

    const voice = wireVoiceRooms({
      config,
      host,
      sql,
      limiter,
      cellsTier: tier,
      media: mediaServers,
    });
    closers.push(() => voice.close());
    const notifications = new NotificationCentre({
      store: new SqlNotificationStore(sql),
      // Delivery attaches to the HTTP app built below; until then no socket could be reached.
      push: { toUser: (...args) => delivery?.publisher.toUser(...args) },
      clock: systemClock,
      logger,
    });
    const notificationRetention = new NotificationRetention(config.notifications, {
      store: sqlNotificationRetentionStore(sql.db),
      clock: systemClock,
      logger,
    });
    const meetings = wireMeetings({
      config,
      host,
      sql,
      kv,
      limiter,
      forwarder: voice.forwarder,
      notifier: notifications,
      logger,
      media: mediaServers,
      cellsTier: tier,
    });
    const routerJanitor = new MediaRouterJanitor(
      {},
      { media: mediaServers, rooms: sqlEndedRooms(sql.db), logger },
    );
    const logRetention = new LogRetention(
      {
        logMs: config.cell.commandLogRetentionMs,
        requestIdMs: config.cell.requestIdRetentionMs,
      },
      { store: sqlLogRetentionStore(sql.db), clock: systemClock, logger },
    );
    startRelaySweeps(
      config,
      [notificationRetention, meetings.chatRetention, routerJanitor, logRetention],
      closers,
    );
    const outbox = {
      store: new SqlOutboxStore(sql),
      webhooks: new SqlWebhookDirectory(sql),
      destinations: new DestinationPolicy(config.outbox.webhookAllowPrivate),
    };
    const http = buildHttpApp({
      // Its serializers keep tokens out of logged URLs (`/ws?token=…`).
      logger: logger.child({ module: 'http' }, { serializers: httpLogSerializers }),
      trustProxy: config.http.trustProxy,
      ops: {
        nodeId: config.nodeId,
        draining: () => !host.isServing,
        cellsLoaded: () => host.loadedCells.length,
        media: media.health,
        readiness: nodeReadiness(host, sql, redis),
      },
      node: nodeControl(host),
      metrics: host.metrics.registry,
      accounts,
      voice,
      meetings,
      adminToken: config.admin.token,
      outbox,
      inspection: wireAdminInspection(host, sql),
      clock: systemClock,
      docs: config.http.docsEnabled,
      notifications,
      web: { dist: defaultWebDist() },
      edge: config.roles.edge,
    });
    const advertiseAddr = await startCellsService(config, voice, meetings, logger);
    const membership = meetingMembership(meetings.api, meetings.limits);
    const meetingFollowers: CanFollow = (user, key) =>
      membership.member(user.appCode, key.roomId, user.userId).then(
        () => user.appCode === key.appCode,
        () => false,
      );
    const wired = wireDelivery({
      config,
      http,
      outbox,
      authenticate: (token) => accounts.authenticate(token),
      frameLog: sqlRoomFrameLog(sql.db),
      registry: host.metrics.registry,
      clock: systemClock,
      logger,
      plugins: {
        // Present voice-room members and active meeting participants follow their room.
        canFollow: plugins.canFollow ?? anyOf(voiceRoomFollowers(voice.api), meetingFollowers),
        frameMappers: {
          voice_room: voiceRoomFrames,
          meeting: meetingFrames,
          ...plugins.frameMappers,
        },
      },
    });
    delivery = wired;
    // What users hold on the media server, for both room kinds (Redis in a cluster).
    const holders = await wireMediaHolders(config, redis, logger, closers);
    const mediaState = redis
      ? new RedisRoomMediaState({ redis, keyPrefix: config.keyPrefix, holder: holders!.self })
      : new MemoryRoomMediaState();
    const owns = (key: CellKey) => host.ownsNow(key);
    const failover = wireMediaFailover(
      directory,
      { meetings: meetings.api, voice: voice.api },
      logger,
      closers,
    );
    const meetingMedia = wireMeetingMedia({
      failover,
      holders,
      hub: wired.hub,
      publisher: wired.publisher,
      meetings,
      media: mediaServers,
      state: mediaState,
      logger,
      nodeId: config.nodeId,
      presenceTtlMs: config.meeting.presenceTtlMs,
      caps: config.media.caps,
    });
    const signalling = meetingMedia;
    const voiceAudio = wireVoiceMedia({
      config,
      failover,
      holders,
      hub: wired.hub,
      publisher: wired.publisher,
      api: voice.api,
      media: mediaServers,
      nodeMedia: media,
      state: mediaState,
      owns,
      logger,
    });
    // What commits make happen on the media servers: at once here when this node owns the
    // room, else (a death after COMMIT, a failure) by any node with media, until done.
    reactor = new Reactor(
      {},
      {
        store: sqlReactionStore(sql.db),
        clock: systemClock,
        logger,
        handlers: new Map([...meetingMedia.reactions, ...voiceAudio.reactions]),
      },
    );
    reactor.start();
    const records = new MediaRecords({
      state: mediaState,
      rules: {
        meeting: meetingMediaRules(membership),
        voice_room: voiceMediaRules(voice.api, ownMediaServerId(config, media)),
      },
      broadcaster: wired.publisher,
      owns,
      logger,
    });
    const routerCaches = followRouterCaches(mediaServers);
    const stopMediaEvents = followMediaEvents(
      config,
      media,
      logger,
      [routerCaches.onEvent, voiceAudio.bridge.onEvent, records.onEvent],
      directory,
      routerCaches.onGap,
    );
    sweepOrphanMedia(config, holders, { meeting: signalling, voice: voiceAudio }, logger, closers);
    // Closed after the sockets (closers run in reverse): their disconnects release media first.
    closers.push(() => signalling.close());
    closers.push(() => voiceAudio.close());
    closers.push(() => records.close());
    closers.push(() => reactor.stop());
    closers.push(() => Promise.resolve(stopMediaEvents()));
    if (advertiseAddr) hostConfig.advertiseAddr = advertiseAddr;
    // Closed in reverse: the host drains first while HTTP still answers (healthz says 503).
    closers.push(() => http.close());
    // Sockets close before HTTP does (open WebSockets would hold its close).
    closers.push(() => wired.close());
    await host.start();
    closers.push(() => host.drain());
    const httpAddress = await http.listen({ host: config.http.host, port: config.http.port });

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
      reactions: reactor,
      notificationRetention,
      httpAddress,
      close: () => (closing ??= closeAll()),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** A follow allowed by any room kind's check (each refuses rooms of other kinds). */
function anyOf(...checks: CanFollow[]): CanFollow {
  return async (user, key) => {
    for (const check of checks) if (await check(user, key)) return true;
    return false;
  };
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
