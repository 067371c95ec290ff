/**
 * `/readyz`: can this node take commands now? Each dependency is probed with a short
 * timeout, at most once per `cacheMs` however many probes arrive (concurrent callers share
 * the probe in flight), so a storm of readiness checks costs one cheap query a second.
 *
 * What gates readiness, and what does not:
 * - draining (or drained, or stopping): not ready. The node takes no cells; send work elsewhere.
 * - the database does not answer: not ready. Nothing can be loaded or committed from here,
 *   while another node may still reach it (a partition, this node's pool stuck).
 * - Redis does not answer: still ready, reported `"redis": "down"` and `status: "degraded"`.
 *   Redis is shared by the whole cluster, so its outage hits every node at once: unready
 *   nodes would move no traffic anywhere better, only empty the load balancer of every
 *   endpoint at the same moment, and after the outage the cluster would stay dark until each
 *   node passed its readiness threshold again — the way a 7-minute Redis outage became 53
 *   minutes down (LiveKit #4663). Loaded rooms meanwhile still answer reads and keep their
 *   sockets, commands answer a retryable `unavailable`, and service resumes the moment Redis
 *   answers (the check says so within a quarter of `cacheMs`; nothing latches).
 */

export type ProbeState = 'up' | 'down';

export interface ReadinessProbes {
  /** A cheap query on the node's database. */
  readonly database: () => Promise<unknown>;
  /** A PING of the node's Redis; absent when the node runs without Redis. */
  readonly redis?: () => Promise<unknown>;
  /** The cell host's service state: `serving`, or why it takes no cells. */
  readonly service: () => 'serving' | 'starting' | 'draining' | 'drained' | 'stopping' | 'stopped';
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly status: 'ready' | 'degraded' | 'starting' | 'draining' | 'unavailable';
  readonly checks: {
    readonly database: ProbeState;
    readonly redis: ProbeState | 'not_used';
    readonly service: ReturnType<ReadinessProbes['service']>;
  };
}

export interface ReadinessOptions {
  /** A probe that has not answered after this is `down`. */
  readonly timeoutMs?: number;
  /** A probe's "up" is reused for this long, a "down" a quarter of it. */
  readonly cacheMs?: number;
  readonly nowMs?: () => number;
}

/** One probe's last answer, reused while fresh; one probe in flight at a time. */
class CachedProbe {
  #at = Number.NEGATIVE_INFINITY;
  #state: ProbeState = 'down';
  #inFlight: Promise<ProbeState> | null = null;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly timeoutMs: number,
    private readonly cacheMs: number,
    private readonly nowMs: () => number,
  ) {}

  state(): Promise<ProbeState> {
    // A "down" is kept a quarter as long: the way back to "up" should not wait a period.
    const keep = this.#state === 'up' ? this.cacheMs : this.cacheMs / 4;
    if (this.nowMs() - this.#at < keep) return Promise.resolve(this.#state);
    this.#inFlight ??= this.run().finally(() => (this.#inFlight = null));
    return this.#inFlight;
  }

  private async run(): Promise<ProbeState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ProbeState>((resolve) => {
      timer = setTimeout(() => resolve('down'), this.timeoutMs);
    });
    const answered = Promise.resolve()
      .then(this.probe)
      .then(
        () => 'up' as const,
        () => 'down' as const,
      );
    const state = await Promise.race([answered, timeout]);
    clearTimeout(timer);
    this.#state = state;
    this.#at = this.nowMs();
    return state;
  }
}

export class Readiness {
  readonly #database: CachedProbe;
  readonly #redis: CachedProbe | null;

  constructor(
    private readonly probes: ReadinessProbes,
    options: ReadinessOptions = {},
  ) {
    const timeoutMs = options.timeoutMs ?? 500;
    const cacheMs = options.cacheMs ?? 1_000;
    const nowMs = options.nowMs ?? (() => performance.now());
    this.#database = new CachedProbe(probes.database, timeoutMs, cacheMs, nowMs);
    this.#redis = probes.redis ? new CachedProbe(probes.redis, timeoutMs, cacheMs, nowMs) : null;
  }

  async check(): Promise<ReadinessReport> {
    const [database, redis] = await Promise.all([
      this.#database.state(),
      this.#redis ? this.#redis.state() : Promise.resolve('not_used' as const),
    ]);
    const service = this.probes.service();
    const checks = { database, redis, service };
    if (service === 'starting') return { ready: false, status: 'starting', checks };
    if (service !== 'serving') return { ready: false, status: 'draining', checks };
    if (database === 'down') return { ready: false, status: 'unavailable', checks };
    return { ready: true, status: redis === 'down' ? 'degraded' : 'ready', checks };
  }
}
