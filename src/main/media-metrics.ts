/**
 * The media server's load as Prometheus gauges on the node's registry: its workers (alive of
 * configured) and its open routers, transports, producers and consumers. An embedded server
 * is read in memory at each scrape; a separate one through its `/internal/info`, at most
 * every few seconds, and a scrape never waits long for it (it keeps the last answer, and
 * reports the server down when it has none).
 */
import { Gauge, type Registry } from 'prom-client';
import type { MediaServerInfo } from '../adapters/media/http-media-orchestrator.js';

/** The load of one media server; null when it cannot be read (down, or none started). */
export type MediaLoadSource = () => Promise<MediaServerInfo | null>;

/** Registers the `rooms_media_*` gauges, labelled with the media server's id. */
export function registerMediaMetrics(registry: Registry, serverId: string, load: MediaLoadSource) {
  const labels = { server: serverId };
  const gauge = (name: string, help: string, value: (info: MediaServerInfo | null) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['server'] as const,
      registers: [registry],
      async collect() {
        this.set(labels, value(await load()));
      },
    });
  gauge('rooms_media_up', 'Whether the media server answered (1) or not (0)', (i) => (i ? 1 : 0));
  gauge('rooms_media_workers', 'mediasoup workers of the media server', (i) =>
    i ? i.workers.length : 0,
  );
  gauge('rooms_media_workers_alive', 'mediasoup workers alive', (i) =>
    i ? i.workers.filter((w) => w.alive).length : 0,
  );
  const stat = (name: keyof MediaServerInfo['stats']) =>
    gauge(`rooms_media_${name}`, `Open ${name} on the media server`, (i) =>
      i ? i.stats[name] : 0,
    );
  stat('routers');
  stat('transports');
  stat('producers');
  stat('consumers');
}

/** The embedded server's load, read in memory (null when it did not start). */
export function embeddedMediaLoad(
  server: {
    readonly pool: { readonly slots: readonly { readonly alive: boolean }[] };
    readonly registry: { readonly stats: MediaServerInfo['stats'] };
  } | null,
): MediaLoadSource {
  return () =>
    Promise.resolve(
      server
        ? {
            workers: server.pool.slots.map((s) => ({ alive: s.alive })),
            stats: server.registry.stats,
          }
        : null,
    );
}

/**
 * A separate server's load: one `/internal/info` call at most every `everyMs`, shared by the
 * gauges of a scrape; a scrape waits at most `waitMs` for a call in flight (else it reports
 * the previous answer). A failed call is reported as down until the next one succeeds.
 */
export function remoteMediaLoad(
  fetchInfo: () => Promise<MediaServerInfo>,
  { everyMs = 5_000, waitMs = 1_000, now = Date.now } = {},
): MediaLoadSource {
  let last: MediaServerInfo | null = null;
  let fetchedAt = -Infinity;
  let inflight: Promise<void> | null = null;
  return async () => {
    if (!inflight && now() - fetchedAt >= everyMs) {
      inflight = fetchInfo()
        .then(
          (info) => {
            last = info;
          },
          () => {
            last = null;
          },
        )
        .finally(() => {
          fetchedAt = now();
          inflight = null;
        });
    }
    if (inflight) await waitAtMost(inflight, waitMs);
    return last;
  };
}

async function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    // Not unref'd: a scrape waiting on it must not find the process exiting under it.
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
