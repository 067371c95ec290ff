/**
 * The mediasoup workers of one media server: one per configured core, routers placed on the
 * least loaded one, a dead worker restarted in its slot (its routers are gone for good: a
 * worker's state lives only in that process, so the pool reports them and callers recreate).
 */
import type { types } from 'mediasoup';
import type { Logger } from 'pino';
import type { Mediasoup } from './mediasoup-loader.js';
import type { MediaServerOptions } from './options.js';
import { errors } from '../shared/error-codes.js';

/** One worker position; the worker in it changes when it dies and is restarted. */
export interface WorkerSlot {
  readonly index: number;
  worker: types.Worker;
  /** The shared WebRTC port of this worker, when `webRtcServerPort` is configured. */
  webRtcServer: types.WebRtcServer | null;
  /** Routers open on the current worker: the placement load. */
  routers: number;
  alive: boolean;
}

export interface WorkerPoolHooks {
  /** The worker in `slot` died; every router it held is already closed. */
  onDied(slot: WorkerSlot, pid: number, error: Error): void;
  /** A replacement worker runs in `slot`. */
  onRestarted(slot: WorkerSlot): void;
}

const RESTART_DELAYS_MS = [100, 1_000, 5_000];

export class WorkerPool {
  readonly #slots: WorkerSlot[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(
    private readonly mediasoup: Mediasoup,
    private readonly options: MediaServerOptions,
    private readonly logger: Logger,
    private readonly hooks: WorkerPoolHooks,
  ) {}

  /** Starts every worker; fails (closing those already started) if one cannot start. */
  async start(): Promise<void> {
    try {
      for (let index = 0; index < this.options.workers; index++) {
        const { worker, webRtcServer } = await this.#spawn(index);
        const slot: WorkerSlot = { index, worker, webRtcServer, routers: 0, alive: true };
        this.#slots.push(slot);
        this.#watch(slot);
      }
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  get slots(): readonly WorkerSlot[] {
    return this.#slots;
  }

  /** The alive worker with the fewest routers (lowest index on a tie). */
  pick(): WorkerSlot {
    let best: WorkerSlot | undefined;
    for (const slot of this.#slots) {
      if (slot.alive && (!best || slot.routers < best.routers)) best = slot;
    }
    if (!best) throw errors.MEDIA_NO_WORKER();
    return best;
  }

  /** Creates a router on the least loaded worker and counts it there until it closes. */
  async createRouter(
    mediaCodecs: types.RouterRtpCodecCapability[],
    appData: types.AppData,
  ): Promise<{ router: types.Router; slot: WorkerSlot }> {
    const slot = this.pick();
    // Counted before the await so that concurrent creations spread over the workers.
    slot.routers++;
    const worker = slot.worker;
    try {
      const router = await worker.createRouter({ mediaCodecs, appData });
      router.observer.once('close', () => {
        if (slot.worker === worker) slot.routers--;
      });
      return { router, slot };
    } catch (error) {
      if (slot.worker === worker) slot.routers--;
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const slot of this.#slots) {
      slot.alive = false;
      slot.worker.close();
    }
    // Wait (briefly) for the worker processes to exit so nothing outlives close().
    await Promise.all(
      this.#slots.map((slot) =>
        slot.worker.subprocessClosed
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 2_000);
              slot.worker.once('subprocessclose', () => {
                clearTimeout(timer);
                resolve();
              });
            }),
      ),
    );
  }

  async #spawn(
    index: number,
  ): Promise<{ worker: types.Worker; webRtcServer: types.WebRtcServer | null }> {
    const worker = await this.mediasoup.createWorker({
      logLevel: this.options.workerLogLevel,
      appData: { index },
    });
    try {
      const base = this.options.webRtcServerPort;
      const webRtcServer =
        base === null
          ? null
          : await worker.createWebRtcServer({
              listenInfos: (['udp', 'tcp'] as const).map((protocol) => ({
                protocol,
                ip: this.options.listenIp,
                ...(this.options.announcedAddress
                  ? { announcedAddress: this.options.announcedAddress }
                  : {}),
                port: base + index,
              })),
            });
      this.logger.info({ worker: index, pid: worker.pid, webRtcServer: base }, 'worker started');
      return { worker, webRtcServer };
    } catch (error) {
      worker.close();
      throw error;
    }
  }

  #watch(slot: WorkerSlot): void {
    const worker = slot.worker;
    worker.once('died', (error) => {
      if (this.#closed || slot.worker !== worker) return;
      slot.alive = false;
      slot.routers = 0;
      slot.webRtcServer = null;
      this.logger.error({ worker: slot.index, pid: worker.pid, err: error }, 'worker died');
      this.hooks.onDied(slot, worker.pid, error);
      this.#restart(slot, 0);
    });
  }

  #restart(slot: WorkerSlot, attempt: number): void {
    const delays = this.options.workerRestartDelaysMs ?? RESTART_DELAYS_MS;
    const delay = delays[Math.min(attempt, delays.length - 1)] ?? 5_000;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#closed) return;
      this.#spawn(slot.index).then(
        ({ worker, webRtcServer }) => {
          if (this.#closed) {
            worker.close();
            return;
          }
          slot.worker = worker;
          slot.webRtcServer = webRtcServer;
          slot.routers = 0;
          slot.alive = true;
          this.#watch(slot);
          this.logger.warn({ worker: slot.index, pid: worker.pid }, 'worker restarted');
          this.hooks.onRestarted(slot);
        },
        (error: unknown) => {
          this.logger.error({ worker: slot.index, err: error, attempt }, 'worker restart failed');
          this.#restart(slot, attempt + 1);
        },
      );
    }, delay);
    this.#timers.add(timer);
  }
}
