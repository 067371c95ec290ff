/**
 * The serving side of a node (./node.ts): the HTTP app, the delivery attached to it (the
 * WebSocket hub, realtime bus and outbox relay), and the final start of the host and of HTTP.
 */
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AccountsService } from '../accounts/service.js';
import type { SqlBackend } from '../adapters/sql/database.js';
import { sqlRoomFrameLog } from '../adapters/sql/room-frame-log.js';
import type { CellHost } from '../cell/host.js';
import { httpLogSerializers } from '../edge/http/log-redaction.js';
import { defaultWebDist } from '../edge/http/web-client.js';
import { meetingFrames } from '../meeting/api/meeting-frames.js';
import type { MeetingMembership } from '../meeting/signalling/ports.js';
import { AudienceCounts } from '../voice-room/signalling/audience-counts.js';
import { RankingFrames } from '../voice-room/signalling/ranking-frames.js';
import { voiceRoomFollowers, voiceRoomFrames } from '../voice-room/api/voice-frames.js';
import type { CanFollow } from '../edge/ws/hub.js';
import type { NotificationCentre } from '../notifications/notification-centre.js';
import { DestinationPolicy } from '../outbox/destinations.js';
import { SqlOutboxStore } from '../outbox/sql-outbox-store.js';
import { SqlWebhookDirectory } from '../outbox/webhooks.js';
import { systemClock } from '../shared/clock.js';
import { wireAdminInspection } from './admin-inspection.js';
import type { Config } from './config.js';
import { wireDelivery, type Delivery, type DeliveryPlugins } from './delivery.js';
import { buildHttpApp } from './http-app.js';
import type { Meetings } from '../meeting/wiring/meetings.js';
import type { NodeMedia } from './node-media.js';
import { nodeControl, nodeReadiness } from './node-ops.js';
import type { VoiceRooms } from '../voice-room/wiring/voice-rooms.js';

type Closers = (() => Promise<unknown>)[];

/** The outbox's store, webhook directory and destination policy (HTTP app and delivery). */
export interface NodeOutbox {
  readonly store: SqlOutboxStore;
  readonly webhooks: SqlWebhookDirectory;
  readonly destinations: DestinationPolicy;
}

export function nodeOutbox(config: Config, sql: SqlBackend): NodeOutbox {
  return {
    store: new SqlOutboxStore(sql),
    webhooks: new SqlWebhookDirectory(sql),
    destinations: new DestinationPolicy(config.outbox.webhookAllowPrivate),
  };
}

/** The node's HTTP app (REST, ops, admin, web client); it listens in {@link serveNode}. */
export function buildNodeHttp(deps: {
  config: Config;
  logger: Logger;
  host: CellHost;
  sql: SqlBackend;
  redis: Redis | null;
  media: NodeMedia;
  accounts: AccountsService;
  voice: VoiceRooms;
  meetings: Meetings;
  outbox: NodeOutbox;
  notifications: NotificationCentre;
}): FastifyInstance {
  const {
    config,
    logger,
    host,
    sql,
    redis,
    media,
    accounts,
    voice,
    meetings,
    outbox,
    notifications,
  } = deps;
  return buildHttpApp({
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
}

/** Delivery on the node's HTTP app: who may follow which room, and each kind's frames. */
export function wireNodeDelivery(deps: {
  config: Config;
  http: FastifyInstance;
  outbox: NodeOutbox;
  accounts: AccountsService;
  sql: SqlBackend;
  host: CellHost;
  voice: VoiceRooms;
  membership: MeetingMembership;
  logger: Logger;
  plugins: DeliveryPlugins;
}): Delivery {
  const { config, http, outbox, accounts, sql, host, voice, membership, logger, plugins } = deps;
  const meetingFollowers: CanFollow = (user, key) =>
    membership.member(user.appCode, key.roomId, user.userId).then(
      () => user.appCode === key.appCode,
      () => false,
    );
  const delivery = wireDelivery({
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
  // The voice crowd's count frame follows the same commits (../voice-room/signalling/audience-counts.ts).
  const audience = new AudienceCounts(delivery.publisher);
  // So does the gift rankings' frame (../voice-room/signalling/ranking-frames.ts).
  const rankings = config.voice.rankings
    ? new RankingFrames({
        store: voice.store,
        broadcaster: delivery.publisher,
        clock: systemClock,
        logger,
      })
    : null;
  return {
    ...delivery,
    onCommitted(batch) {
      delivery.onCommitted(batch);
      audience.onCommitted(batch);
      rankings?.onCommitted(batch);
    },
    close: async () => {
      audience.close();
      await rankings?.close();
      return delivery.close();
    },
  };
}

/** A follow allowed by any room kind's check (each refuses rooms of other kinds). */
function anyOf(...checks: CanFollow[]): CanFollow {
  return async (user, key) => {
    for (const check of checks) if (await check(user, key)) return true;
    return false;
  };
}

/** The last steps: starts the host, then HTTP listens; returns the address it bound. */
export async function serveNode(
  config: Config,
  deps: { host: CellHost; http: FastifyInstance; delivery: Delivery },
  closers: Closers,
): Promise<string> {
  const { host, http, delivery: wired } = deps;
  // Closed in reverse: the host drains first while HTTP still answers (healthz says 503).
  closers.push(() => http.close());
  // Sockets close before HTTP does (open WebSockets would hold its close).
  closers.push(() => wired.close());
  await host.start();
  closers.push(() => host.drain());
  return http.listen({ host: config.http.host, port: config.http.port });
}
