/**
 * Test-only: the node's HTTP app on embedded SQLite and in-memory coordination, with its
 * real services (one cell host, accounts, the voice-room API) but nothing listening: no
 * HTTP port, no gRPC server, no outbox relay, no media server. REST tests `inject` into it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { MemoryLeaseManager } from '../../adapters/memory/memory-lease.js';
import { MemoryNodeRegistry } from '../../adapters/memory/memory-node-registry.js';
import { MemoryRateLimiter } from '../../adapters/memory/memory-rate-limiter.js';
import { openSqlBackend, type SqlBackend } from '../../adapters/sql/database.js';
import { SqlCellStore } from '../../adapters/sql/sql-cell-store.js';
import { SqlNotificationStore } from '../../adapters/sql/notifications/sql-notification-store.js';
import {
  NotificationCentre,
  type NotificationPush,
} from '../../notifications/notification-centre.js';
import { CellHost } from '../../cell/host.js';
import { silentLogger } from '../../cell/testing/harness.js';
import { DestinationPolicy } from '../../outbox/destinations.js';
import { SqlOutboxStore } from '../../outbox/sql-outbox-store.js';
import { SqlWebhookDirectory } from '../../outbox/webhooks.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { wireAccounts } from '../accounts.js';
import { loadConfig } from '../config.js';
import { buildHttpApp } from '../http-app.js';
import type { WebClientOptions } from '../../edge/http/web-client.js';
import { wireAdminInspection } from '../admin-inspection.js';
import { wireVoiceRooms, type VoiceRooms } from '../../voice-room/wiring/voice-rooms.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';
import { MemoryKeyValue } from '../../adapters/memory/memory-key-value.js';
import type { MeetingStore } from '../../meeting/api/meeting-store.js';
import type { KeyValue } from '../../shared/key-value.js';
import { wireMeetings, type Meetings } from '../../meeting/wiring/meetings.js';
import { sqlMeetingStore } from '../../meeting/sql/store.js';
import { nodeControl, nodeReadiness } from '../node-ops.js';

export interface TestHttpApp {
  readonly http: FastifyInstance;
  readonly meetings: Meetings;
  readonly voice: VoiceRooms;
  /** The password lockout's counters and the invite tokens (in memory). */
  readonly kv: KeyValue;
  /** The node's database (tests read rows the API must not show). */
  readonly sql: SqlBackend;
  close(): Promise<void>;
}

/** `env` adds to (or overrides) a minimal embedded configuration. */
export async function startTestHttpApp(
  env: Record<string, string> = {},
  options: {
    /** Wraps the meetings' SQL store (e.g. a code allocator that always collides). */
    wrapMeetingStore?: (store: MeetingStore) => MeetingStore;
    /** The KeyValue store's clock (e.g. one a test moves ahead to expire invite tokens). */
    kvClock?: Clock;
    /** Another KeyValue store (e.g. Redis, whose calls really interleave); `kvClock` is unused then. */
    kv?: KeyValue;
    /** Receives the notification centre's live frames (default: none are sent). */
    push?: NotificationPush;
    /** Where new rooms' routers go, and the media servers meetings reach (default: none). */
    media?: MediaServers;
    /** The web client's dist folder to serve at `/` (default: none). */
    web?: WebClientOptions;
  } = {},
): Promise<TestHttpApp> {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-http-'));
  const config = loadConfig({
    ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
    ROOMS_BCRYPT_COST: '4',
    ROOMS_LOG_LEVEL: 'silent',
    ROOMS_JWT_SECRET: 'http-app-test-secret-0123456789abcdef',
    ...env,
  });
  const sql = await openSqlBackend(config.db.url);
  const limiter = new MemoryRateLimiter({ clock: systemClock });
  const host = new CellHost(
    { nodeId: 'http-test', advertiseAddr: '127.0.0.1:1', ...config.cell },
    {
      store: new SqlCellStore(sql),
      lease: new MemoryLeaseManager({ clock: systemClock }),
      registry: new MemoryNodeRegistry({ clock: systemClock }),
      clock: systemClock,
      logger: silentLogger,
    },
  );
  const accounts = wireAccounts(config, sql, limiter, config.accounts.jwtSecret!);
  const voice = wireVoiceRooms({
    config,
    host,
    sql,
    limiter,
    ...(options.media ? { media: options.media } : {}),
  });
  const kv = options.kv ?? new MemoryKeyValue({ clock: options.kvClock ?? systemClock });
  const notifications = new NotificationCentre({
    store: new SqlNotificationStore(sql),
    push: options.push ?? { toUser: () => undefined }, // no WebSocket hub here: stored only
    clock: systemClock,
    logger: silentLogger,
  });
  const meetingStore = sqlMeetingStore(sql.db);
  const meetings = wireMeetings({
    config,
    host,
    sql,
    kv,
    limiter,
    forwarder: voice.forwarder,
    notifier: notifications,
    logger: silentLogger,
    store: options.wrapMeetingStore ? options.wrapMeetingStore(meetingStore) : meetingStore,
    ...(options.media ? { media: options.media } : {}),
  });
  const http = buildHttpApp({
    logger: silentLogger,
    ops: {
      nodeId: 'http-test',
      draining: () => !host.isServing,
      cellsLoaded: () => 0,
      readiness: nodeReadiness(host, sql, null),
    },
    node: nodeControl(host),
    metrics: host.metrics.registry,
    accounts,
    voice,
    meetings,
    adminToken: config.admin.token,
    outbox: {
      store: new SqlOutboxStore(sql),
      webhooks: new SqlWebhookDirectory(sql),
      destinations: new DestinationPolicy(),
    },
    inspection: wireAdminInspection(host, sql),
    clock: systemClock,
    docs: config.http.docsEnabled,
    notifications,
    ...(options.web ? { web: options.web } : {}),
  });
  await host.start();
  return {
    http,
    meetings,
    voice,
    kv,
    sql,
    async close() {
      await host.drain();
      await http.close();
      await voice.close();
      await sql.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
