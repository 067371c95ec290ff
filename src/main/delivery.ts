/**
 * Wires event delivery into a node: the realtime bus (Redis in cluster mode, in-process
 * otherwise), the publisher the host calls after each commit, the WebSocket hub on the
 * HTTP server, and the outbox relay and its retention sweep (unless ROOMS_OUTBOX_ENABLED=false).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { MemoryRealtimeBus } from '../adapters/memory/memory-bus.js';
import { RedisRealtimeBus } from '../adapters/redis/redis-bus.js';
import type { CommittedBatch } from '../cell/cell.js';
import { WsHub, type AuthenticateToken, type CanFollow } from '../edge/ws/hub.js';
import type { DestinationPolicy } from '../outbox/destinations.js';
import { createOutboxMetrics } from '../outbox/metrics.js';
import { OutboxRelay } from '../outbox/relay.js';
import { OutboxRetention } from '../outbox/retention.js';
import type { SqlOutboxStore } from '../outbox/sql-outbox-store.js';
import { WebhookSink, webhookSinks } from '../outbox/webhook-sink.js';
import type { SqlWebhookDirectory } from '../outbox/webhooks.js';
import type { RealtimeBus } from '../realtime/bus.js';
import type { FrameMapper } from '../realtime/frames.js';
import { createRealtimeMetrics } from '../realtime/metrics.js';
import { RealtimePublisher } from '../realtime/publisher.js';
import { replayFrames, type RoomFrameLog } from '../realtime/frame-replay.js';
import type { Clock } from '../shared/clock.js';
import type { Config } from './config.js';

/** What room kinds plug into delivery (each defaults to "nothing"). */
export interface DeliveryPlugins {
  /** Who may follow which room over WebSocket; default: nobody (until a kind says). */
  readonly canFollow?: CanFollow;
  /** Frame mapping per room kind; kinds without one publish their events as they are. */
  readonly frameMappers?: Readonly<Record<string, FrameMapper>>;
}

export interface Delivery {
  readonly bus: RealtimeBus;
  readonly publisher: RealtimePublisher;
  readonly hub: WsHub;
  /** Null when ROOMS_OUTBOX_ENABLED=false on this node. */
  readonly relay: OutboxRelay | null;
  /** The host's commit listener: publish to the bus, wake the relay. */
  onCommitted(batch: CommittedBatch): void;
  /** Sockets (1001), then the relay, then the bus. Idempotent. */
  close(): Promise<void>;
}

const denyAll: CanFollow = () => Promise.resolve(false);

export function wireDelivery(deps: {
  config: Config;
  http: FastifyInstance;
  /** The outbox's store, webhook directory and destination policy (the HTTP app's too). */
  outbox: { store: SqlOutboxStore; webhooks: SqlWebhookDirectory; destinations: DestinationPolicy };
  authenticate: AuthenticateToken;
  /** The rooms' committed envelopes, for `room.subscribe {since_event_id}` replays. */
  frameLog?: RoomFrameLog;
  registry: Registry;
  clock: Clock;
  logger: Logger;
  plugins?: DeliveryPlugins;
}): Delivery {
  const { config, http, clock, logger, plugins = {} } = deps;
  const bus: RealtimeBus = config.redisUrl
    ? RedisRealtimeBus.connect(config.redisUrl, config.keyPrefix, logger)
    : new MemoryRealtimeBus();
  const realtimeMetrics = createRealtimeMetrics(deps.registry);
  const publisher = new RealtimePublisher({
    bus,
    logger,
    metrics: realtimeMetrics,
    ...(plugins.frameMappers ? { mappers: plugins.frameMappers } : {}),
  });
  const hub = new WsHub(
    {
      maxBufferedBytes: config.realtime.maxBufferedBytes,
      pingIntervalMs: config.realtime.pingIntervalMs,
      maxRoomsPerSocket: config.realtime.maxRoomsPerSocket,
      coalesceMs: config.realtime.coalesceMs,
      frames: {
        ratePerSecond: config.realtime.maxFramesPerSecond,
        burst: config.realtime.frameBurst,
        maxInFlight: config.realtime.maxInFlight,
      },
    },
    {
      bus,
      authenticate: deps.authenticate,
      canFollow: plugins.canFollow ?? denyAll,
      ...(deps.frameLog
        ? {
            replay: (key, from) => replayFrames(deps.frameLog!, publisher.frameMappers, key, from),
          }
        : {}),
      logger,
      metrics: realtimeMetrics,
    },
  );
  // `/ws` is the edge role's; without it the hub only closes (it never has a socket).
  if (config.roles.edge) hub.attach(http.server);

  const { outbox } = config;
  const { store, webhooks: directory, destinations } = deps.outbox;
  // Registered on every node: the oldest-pending gauge is the table's, relay or not.
  const outboxMetrics = createOutboxMetrics(deps.registry, () => store.oldestUndeliveredAtMs());
  const sink = new WebhookSink({ timeoutMs: outbox.webhookTimeoutMs, destinations });
  const relay = outbox.enabled
    ? new OutboxRelay(
        {
          batchSize: outbox.batchSize,
          concurrency: outbox.concurrency,
          pollMs: outbox.pollMs,
          gatherMs: outbox.gatherMs,
          lockMs: outbox.lockMs,
          requestTimeoutMs: outbox.webhookTimeoutMs,
          retry: {
            baseMs: outbox.retryBaseMs,
            maxMs: outbox.retryMaxMs,
            maxAttempts: outbox.maxAttempts,
          },
        },
        {
          store,
          // Read fresh per claimed batch: a webhook change on any node applies at once.
          sinks: webhookSinks(directory, sink),
          clock,
          logger,
          nodeId: config.nodeId,
          metrics: outboxMetrics,
        },
      )
    : null;
  relay?.start();
  if (!relay) logger.info('outbox relay off on this node (ROOMS_OUTBOX_ENABLED=false)');
  const retention = outbox.enabled
    ? new OutboxRetention(
        { settledMs: outbox.retentionMs, failedMs: outbox.failedRetentionMs },
        { store, clock, logger },
      )
    : null;
  retention?.start();

  let closing: Promise<void> | undefined;
  return {
    bus,
    publisher,
    hub,
    relay,
    onCommitted(batch) {
      publisher.onCommitted(batch);
      relay?.nudge();
    },
    close: () =>
      (closing ??= (async () => {
        await hub.close();
        await relay?.stop();
        await retention?.stop();
        sink.close();
        await bus.close();
      })()),
  };
}
