/**
 * The sweeps a node with the relay role runs (./node.ts): old notifications, meeting and
 * voice room chat, ended meetings' routers and the command log.
 */
import type { Logger } from 'pino';
import type { SqlBackend } from '../adapters/sql/database.js';
import { sqlEndedRooms } from '../adapters/sql/ended-rooms.js';
import { sqlLogRetentionStore } from '../adapters/sql/log-retention-store.js';
import { LogRetention } from '../cell/log-retention.js';
import type { MediaServers } from '../media-cluster/media-servers.js';
import { MediaRouterJanitor } from '../media-cluster/router-janitor.js';
import type { NotificationRetention } from '../notifications/notification-retention.js';
import { systemClock } from '../shared/clock.js';
import type { Config } from './config.js';
import type { Meetings } from '../meeting/wiring/meetings.js';
import { startRelaySweeps } from './node-roles.js';
import { VoiceChatRetention } from '../voice-room/wiring/chat-retention.js';

/** Starts the relay's sweeps (each stopped by the node's close); returns the router janitor. */
export function startNodeSweeps(
  deps: {
    config: Config;
    sql: SqlBackend;
    mediaServers: MediaServers;
    meetings: Meetings;
    notificationRetention: NotificationRetention;
    logger: Logger;
  },
  closers: (() => Promise<unknown>)[],
): MediaRouterJanitor {
  const { config, sql, mediaServers, meetings, notificationRetention, logger } = deps;
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
  const voiceChatRetention = new VoiceChatRetention(
    { retentionMs: config.voice.chatRetentionMs },
    { db: sql.db, clock: systemClock, logger },
  );
  startRelaySweeps(
    config,
    [
      notificationRetention,
      meetings.chatRetention,
      voiceChatRetention,
      routerJanitor,
      logRetention,
    ],
    closers,
  );
  return routerJanitor;
}
