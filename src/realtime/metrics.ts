/** Realtime metrics (publisher and WebSocket hub), on the registry they are given. */
import { Counter, Gauge, Registry } from 'prom-client';

export interface RealtimeMetrics {
  readonly registry: Registry;
  readonly published: Counter<'channel'>;
  readonly publishErrors: Counter;
  readonly connections: Gauge;
  readonly followedRooms: Gauge;
  readonly framesSent: Counter;
  /** Client messages received (before the frame budget: a flood shows here). */
  readonly framesReceived: Counter;
  readonly closed: Counter<'reason'>;
}

export function createRealtimeMetrics(registry: Registry = new Registry()): RealtimeMetrics {
  const registers = [registry];
  return {
    registry,
    published: new Counter({
      name: 'rooms_realtime_published_total',
      help: 'Messages published to the realtime bus, by channel kind (room, user)',
      labelNames: ['channel'] as const,
      registers,
    }),
    publishErrors: new Counter({
      name: 'rooms_realtime_publish_errors_total',
      help: 'Realtime publishes that failed (the frames are lost; clients refetch on a gap)',
      registers,
    }),
    connections: new Gauge({
      name: 'rooms_ws_connections',
      help: 'Open WebSocket connections on this node',
      registers,
    }),
    followedRooms: new Gauge({
      name: 'rooms_ws_followed_rooms',
      help: 'Rooms this node subscribes to because a local socket follows them',
      registers,
    }),
    framesSent: new Counter({
      name: 'rooms_ws_frames_sent_total',
      help: 'Frames queued to WebSocket clients (ACKs, room and user frames)',
      registers,
    }),
    framesReceived: new Counter({
      name: 'rooms_ws_frames_received_total',
      help: 'Messages received from WebSocket clients',
      registers,
    }),
    closed: new Counter({
      name: 'rooms_ws_closed_total',
      help: 'WebSocket connections closed, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
  };
}
