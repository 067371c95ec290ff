/**
 * The rooms of a node (./node.ts): voice rooms, the notification centre and its retention,
 * and meetings.
 */
import type { Logger } from 'pino';
import type { SqlBackend } from '../adapters/sql/database.js';
import { SqlNotificationStore } from '../adapters/sql/notifications/sql-notification-store.js';
import { sqlNotificationRetentionStore } from '../adapters/sql/notifications/notification-retention.js';
import type { SqlStoreTypes } from '../adapters/sql/sql-store-types.js';
import type { CellsTier } from '../cell/cells-tier.js';
import type { CellHost } from '../cell/host.js';
import type { MediaServers } from '../media-cluster/media-servers.js';
import { NotificationCentre } from '../notifications/notification-centre.js';
import { NotificationRetention } from '../notifications/notification-retention.js';
import { systemClock } from '../shared/clock.js';
import type { KeyValue } from '../shared/key-value.js';
import type { RateLimiter } from '../shared/rate-limiter.js';
import type { Config } from './config.js';
import type { Delivery } from './delivery.js';
import { wireMeetings, type Meetings } from '../meeting/wiring/meetings.js';
import { wireVoiceRooms, type VoiceRooms } from '../voice-room/wiring/voice-rooms.js';

export interface NodeRooms {
  readonly voice: VoiceRooms;
  readonly notifications: NotificationCentre;
  readonly notificationRetention: NotificationRetention;
  readonly meetings: Meetings;
}

/** Voice rooms (closed by the node's close), notifications and meetings. */
export function wireRooms(
  deps: {
    config: Config;
    host: CellHost<SqlStoreTypes>;
    sql: SqlBackend;
    kv: KeyValue;
    limiter: RateLimiter;
    cellsTier: CellsTier | null;
    mediaServers: MediaServers;
    logger: Logger;
    /** The node's delivery once wired (null until then). */
    delivery: () => Delivery | null;
  },
  closers: (() => Promise<unknown>)[],
): NodeRooms {
  const { config, host, sql, kv, limiter, cellsTier: tier, mediaServers, logger } = deps;
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
    // Delivery attaches to the HTTP app the node builds next; until then no socket could be reached.
    push: { toUser: (...args) => deps.delivery()?.publisher.toUser(...args) },
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
  return { voice, notifications, notificationRetention, meetings };
}
