/**
 * One media server: the mediasoup workers, the registry of their resources, the event bus and
 * the internal HTTP API. Runs as its own process (`npm run start:media`, ./main.ts) or inside
 * a rooms node (embedded mode, src/main/node.ts); both call {@link startMediaServer}.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Recorder } from './recorder.js';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { installEnvelopeErrors } from '../shared/http-envelope.js';
import { MediaEventBus } from './events.js';
import { MediaRegistry } from './media-registry.js';
import { loadMediasoup } from './mediasoup-loader.js';
import { DEFAULT_PEER_LOST_MS, type MediaServerOptions } from './options.js';
import { RemoteEdges } from './remote-edges.js';
import { MediaServerHeartbeat, type MediaRegistrationSettings } from './registration.js';
import { registerMediaRoutes } from './routes.js';
import type { WorkerBin } from './worker-bin.js';
import { WorkerPool } from './worker-pool.js';

/** How long a call to another media server (about an edge there) may take. */
const REMOTE_CALL_TIMEOUT_MS = 5_000;

/** A running media server. */
export interface MediaServer {
  /** Base URL of the internal API, e.g. `http://127.0.0.1:7070`. */
  readonly url: string;
  readonly internalToken: string;
  readonly events: MediaEventBus;
  /** The room recordings made here. */
  readonly recorder: Recorder;
  readonly registry: MediaRegistry;
  readonly pool: WorkerPool;
  readonly http: FastifyInstance;
  readonly workerBin: WorkerBin;
  /** Its registration in the cluster's directory; null when it has no Redis. */
  readonly heartbeat: MediaServerHeartbeat | null;
  /** Draining: keeps its rooms, takes no new ones (what the directory is told). */
  readonly draining: boolean;
  setDraining(draining: boolean): Promise<void>;
  /**
   * Leaves the directory, stops the HTTP API, then the workers (their routers close with
   * them). Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Starts the workers and the API. Rejects with `unavailable`/`MEDIA_WORKER_MISSING` when
 * there is no worker binary, and with the listen error when the port is taken.
 */
export async function startMediaServer(
  options: MediaServerOptions,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  registration: MediaRegistrationSettings | null = null,
): Promise<MediaServer> {
  const log = logger.child({ module: 'media' });
  const { module: mediasoup, bin } = await loadMediasoup(options.workerBin, env);
  mediasoup.setLogEventListeners({
    onwarn: (namespace, message) => log.warn({ namespace }, message),
    onerror: (namespace, message, error) => log.error({ namespace, err: error }, message),
  });
  const events = new MediaEventBus();
  // The registry needs the pool and the pool's hooks need the registry: tie the knot here.
  const ref: { registry?: MediaRegistry } = {};
  const pool = new WorkerPool(mediasoup, options, log, {
    onDied: (slot, pid, error) => ref.registry?.reportWorkerDied(slot, pid, error),
    onRestarted: (slot) =>
      events.publish({
        type: 'worker_restarted',
        worker_index: slot.index,
        worker_pid: slot.worker.pid,
      }),
  });
  await pool.start();
  const registry = new MediaRegistry(pool, events, options, log);
  ref.registry = registry;
  const recordings = options.recordings ?? {
    dir: path.join(tmpdir(), `rooms-recordings-${process.pid}`),
    ffmpeg: 'ffmpeg',
    retentionMs: 0,
  };
  const recorder = new Recorder(registry, events, recordings, log.child({ module: 'recorder' }));
  // What a dead predecessor left recording is interrupted; old recordings go.
  await recorder.sweep();
  const sweeps = setInterval(() => void recorder.sweep().catch(() => undefined), 3_600_000);
  sweeps.unref();

  // Per-request lines at info would drown the log (every signalling step is a call).
  const level = log.levelVal >= 40 ? log.level : 'warn';
  const httpLogger: FastifyBaseLogger = log.child({ module: 'media-http' }, { level });
  const http: FastifyInstance = Fastify({
    loggerInstance: httpLogger,
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
  });
  installEnvelopeErrors(http);
  // Set once listening (the heartbeat needs the bound address); drains only then.
  let heartbeat: MediaServerHeartbeat | null = null;
  let draining = false;
  const setDraining = async (on: boolean) => {
    draining = on;
    await heartbeat?.setDraining(on);
  };
  registerMediaRoutes(http, {
    drain: { draining: () => draining, set: setDraining },
    registry,
    pool,
    bus: events,
    recorder,
    recordingsDir: recordings.dir,
    internalToken: options.internalToken,
    mediasoupVersion: mediasoup.version,
    workerBin: bin,
  });
  let address: string;
  try {
    address = await http.listen({ host: options.host, port: options.port });
  } catch (error) {
    await http.close().catch(() => undefined);
    await pool.close();
    throw error;
  }
  let remote: RemoteEdges | null = null;
  if (registration) {
    const beat = new MediaServerHeartbeat(registration, address, { registry, pool }, log);
    heartbeat = beat;
    await beat.start();
    // Registered: the other servers of the cluster can hold edges of this server's rooms.
    remote = new RemoteEdges({
      serverId: registration.id,
      options,
      peers: () => beat.peers(),
      timeoutMs: REMOTE_CALL_TIMEOUT_MS,
      peerLostMs: options.peerLostMs ?? DEFAULT_PEER_LOST_MS,
      logger: log.child({ module: 'remote-edges' }),
    });
    registry.useRemoteEdges(remote);
  }
  log.info(
    {
      url: address,
      workers: options.workers,
      workerBin: bin.path,
      source: bin.source,
      registeredAs: registration?.id ?? null,
    },
    'media server ready',
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await heartbeat?.stop();
      clearInterval(sweeps);
      // Their files are finished before the workers (and the consumers) go.
      await recorder.close();
      remote?.close();
      await http.close().catch((err: unknown) => log.warn({ err }, 'media http close'));
      await pool.close();
    })());
  return {
    url: address,
    internalToken: options.internalToken,
    events,
    registry,
    pool,
    http,
    recorder,
    workerBin: bin,
    heartbeat,
    get draining() {
      return draining;
    },
    setDraining,
    close,
  };
}
