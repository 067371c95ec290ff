/**
 * What a media server says of itself in the cluster's directory (its heartbeat), and the
 * rule that picks the server a new room's router goes on. Pure: the Redis side is
 * src/adapters/redis/media-server-records.ts, the directory src/adapters/redis/redis-media-servers.ts.
 */

/** A media server's open resources and how busy its workers are. */
export interface MediaServerLoad {
  readonly routers: number;
  readonly transports: number;
  readonly producers: number;
  readonly consumers: number;
  /** Per worker, the share of one core it used since the last heartbeat (0..1 and more). */
  readonly worker_cpu: readonly number[];
}

/** One media server's registration: written every heartbeat, gone when it stops beating. */
export interface MediaServerRecord {
  readonly id: string;
  /** Its internal API, as the nodes reach it (`http://host:port`). */
  readonly url: string;
  /** Random per process start: a restarted server under the same id is a new one. */
  readonly boot: string;
  readonly load: MediaServerLoad;
  /** Keeps its rooms, takes no new ones. */
  readonly draining: boolean;
  /** When it wrote this (its clock). */
  readonly at_ms: number;
}

/** The mean worker CPU share (0 without workers). */
export function meanCpu(load: MediaServerLoad): number {
  const cpu = load.worker_cpu;
  return cpu.length === 0 ? 0 : cpu.reduce((a, b) => a + b, 0) / cpu.length;
}

/**
 * How loaded a server is, smaller is better: CPU first, in steps of 10 % (so that an idle
 * server's jitter does not decide), then routers (a room's worth of work each), then the
 * transports and consumers that carry its media.
 */
export function loadOrder(a: MediaServerLoad, b: MediaServerLoad): number {
  const step = (load: MediaServerLoad) => Math.floor(meanCpu(load) * 10);
  return (
    step(a) - step(b) ||
    a.routers - b.routers ||
    a.transports + a.consumers - (b.transports + b.consumers)
  );
}

/**
 * The server a new room goes on: the least loaded of the live, non-draining ones (ties: the
 * smaller id, so every node picks alike from one snapshot); null when there is none.
 */
export function leastLoaded(live: readonly MediaServerRecord[]): MediaServerRecord | null {
  let best: MediaServerRecord | null = null;
  for (const server of live) {
    if (server.draining) continue;
    if (
      !best ||
      loadOrder(server.load, best.load) < 0 ||
      (loadOrder(server.load, best.load) === 0 && server.id < best.id)
    ) {
      best = server;
    }
  }
  return best;
}

/** The record with one more router counted (a placement made since the last snapshot). */
export function withOneMoreRouter(record: MediaServerRecord): MediaServerRecord {
  return { ...record, load: { ...record.load, routers: record.load.routers + 1 } };
}
