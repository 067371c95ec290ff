/**
 * The outbox relay: one worker per node (switch it off per node with
 * ROOMS_OUTBOX_ENABLED=false), any number of nodes on one table. It claims batches,
 * delivers each room's claimed events one after the other (rooms in parallel, at most
 * `concurrency` requests at a time) and settles the outcomes.
 *
 * Order: the store only hands out a room's events when everything before them is
 * delivered or failed, and this worker stops a room at its first retryable failure,
 * releasing what follows. A failed event (the sink refused it for good, or it ran out of
 * attempts) does not block its room: it waits in the admin API's failed list.
 *
 * Sinks are resolved once per claimed batch, after the claim: an event committed after a
 * webhook change committed (on any node) is claimed later still, so it sees the change.
 * An event whose app has no webhook then is `skipped` (never `delivered`: it was not sent).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { createOutboxMetrics, type OutboxMetrics } from './metrics.js';
import type {
  Claim,
  ClaimedEvent,
  FencedSettlement,
  OutboxStore,
  Settlement,
} from './outbox-store.js';
import { exhausted, retryDelayMs, type RetryPolicy } from './retry-policy.js';
/** What one delivery attempt came to. */
export type DeliveryOutcome =
  | { readonly kind: 'delivered'; readonly status: number }
  /** Unknown outcome or "try later": the event is tried again after a backoff. */
  | { readonly kind: 'retryable'; readonly error: string }
  /** The sink refused it for good. */
  | { readonly kind: 'failed'; readonly error: string };

/** Where one app's events go. */
export interface EventSink {
  /** Never throws: every failure is an outcome. */
  deliver(event: ClaimedEvent, attempt: number): Promise<DeliveryOutcome>;
  /** Why it does not take this event (settled `skipped`, unsent); null: it takes it. */
  refuses?(event: ClaimedEvent): string | null;
}

/**
 * The sinks of the given apps, read fresh (called once per claimed batch); null for an app
 * that has none (its events are skipped).
 */
export type SinkResolver = (
  appCodes: readonly string[],
) => Promise<ReadonlyMap<string, EventSink | null>>;

/** `last_error` of a skipped event. */
export const NO_SINK_REASON = 'no webhook configured for the app';

export interface RelayConfig {
  /** Most events claimed and not yet settled. */
  readonly batchSize: number;
  /** Most events of one room in one claim. */
  readonly perRoomLimit?: number;
  /** Most requests in flight. */
  readonly concurrency: number;
  /** How often an idle worker looks for work (a local commit wakes it at once). */
  readonly pollMs: number;
  /**
   * Least time between two claims, unless the earlier one came back full (default 0). A
   * stream of commits then makes one claim per window instead of one per commit: a claim
   * is several queries whatever it finds, and the webhooks can wait this long.
   */
  readonly gatherMs?: number;
  readonly lockMs: number;
  /** The sink's request timeout: no request starts unless it would end before the lock. */
  readonly requestTimeoutMs: number;
  readonly retry: RetryPolicy;
}

export interface RelayDeps {
  readonly store: OutboxStore;
  readonly sinks: SinkResolver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  /** Default `<nodeId>:<random>`: unique per worker instance, also across restarts. */
  readonly workerId?: string;
  readonly nodeId?: string;
  readonly random?: () => number;
}

export class OutboxRelay {
  readonly workerId: string;
  readonly metrics: OutboxMetrics;
  private readonly logger: Logger;
  private readonly permits: Semaphore;
  private readonly active = new Set<Promise<void>>();
  private readonly pendingSettles: FencedSettlement[] = [];
  private settling: Promise<void> | null = null;
  private loop: Promise<void> | null = null;
  private running = false;
  private aborted = false;
  private outstanding = 0;
  private wakeSignal = false;
  private wake: (() => void) | null = null;
  /** Ends a gathering pause early (stop, abort). */
  private cutPause: (() => void) | null = null;

  constructor(
    readonly config: RelayConfig,
    private readonly deps: RelayDeps,
  ) {
    this.workerId = deps.workerId ?? `${deps.nodeId ?? 'relay'}:${randomBytes(4).toString('hex')}`;
    this.metrics = deps.metrics ?? createOutboxMetrics();
    this.logger = deps.logger.child({ module: 'outbox-relay', worker: this.workerId });
    this.permits = new Semaphore(config.concurrency);
  }

  start(): void {
    if (this.loop) throw new Error('relay already started');
    this.running = true;
    this.loop = this.run();
    this.logger.info('outbox relay started');
  }

  /** A commit on this node: look for work now instead of at the next poll. */
  nudge(): void {
    this.wakeUp();
  }

  /** Stops claiming, finishes requests in flight, releases the rest, settles. Idempotent. */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp();
    this.cutPause?.();
    await this.loop;
    await Promise.all([...this.active]);
    await this.settling;
    this.logger.info('outbox relay stopped');
  }

  /**
   * Stops as if the process died: nothing more is settled, so what this worker holds
   * stays delivering until its lock expires and another worker claims it again.
   */
  async abort(): Promise<void> {
    this.aborted = true;
    this.running = false;
    this.wakeUp();
    this.cutPause?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { batchSize, pollMs, lockMs } = this.config;
    const perRoomLimit = this.config.perRoomLimit ?? Math.min(batchSize, 32);
    const gatherMs = this.config.gatherMs ?? 0;
    let lastClaimAt = -Infinity;
    let lastWasFull = false;
    while (this.running) {
      if (this.outstanding >= batchSize) {
        await this.sleep(pollMs);
        continue;
      }
      // Commits and finished rooms that wake the worker meanwhile are claimed together.
      const early = lastClaimAt + gatherMs - performance.now();
      if (early > 0 && !lastWasFull) {
        await this.pause(early);
        if (!this.running) break;
      }
      let claim: Claim;
      const limit = batchSize - this.outstanding;
      lastClaimAt = performance.now();
      try {
        claim = await this.deps.store.claim({
          workerId: this.workerId,
          nowMs: this.deps.clock.nowMs(),
          lockMs,
          limit,
          perRoomLimit,
        });
      } catch (err) {
        this.logger.warn({ err }, 'outbox claim failed');
        await this.sleep(pollMs);
        continue;
      }
      if (this.aborted) return;
      lastWasFull = claim.events.length >= limit;
      let sinks: ReadonlyMap<string, EventSink | null> = new Map();
      if (claim.events.length > 0) {
        try {
          sinks = await this.deps.sinks([...new Set(claim.events.map((e) => e.appCode))]);
        } catch (err) {
          // Without knowing the sinks nothing can be settled honestly: give the batch back.
          this.logger.warn({ err }, 'webhook lookup failed');
          if (this.aborted) return;
          await this.settle(
            claim,
            claim.events.map((e) => ({ kind: 'released', id: e.id })),
          );
          await this.sleep(pollMs);
          continue;
        }
        if (this.aborted) return;
      }
      this.outstanding += claim.events.length;
      for (const events of byRoom(claim.events)) {
        const sink = sinks.get(events[0]!.appCode) ?? null;
        const delivery: Promise<void> = this.deliverRoom(claim, events, sink)
          .catch((err: unknown) => this.logger.error({ err }, 'outbox delivery failed'))
          .finally(() => {
            this.outstanding -= events.length;
            this.active.delete(delivery);
            this.wakeUp();
          });
        this.active.add(delivery);
      }
      // A short batch means we caught up: wait for a commit, a finished room or the poll.
      if (claim.events.length < limit) await this.sleep(pollMs);
    }
  }

  /** One room's claimed events, strictly one after the other (one room, one app, one sink). */
  private async deliverRoom(
    claim: Claim,
    events: readonly ClaimedEvent[],
    sink: EventSink | null,
  ): Promise<void> {
    const { clock } = this.deps;
    const { requestTimeoutMs, retry, lockMs } = this.config;
    const { deliveries, attempts, deliverySeconds } = this.metrics;
    // Clock skew between nodes and event-loop lag eat into the lock: keep a margin.
    const margin = Math.min(1_000, lockMs / 4);
    const settlements: Settlement[] = [];
    const release = (from: number) => {
      for (const event of events.slice(from)) settlements.push({ kind: 'released', id: event.id });
    };
    let next = 0;
    while (next < events.length) {
      const event = events[next]!;
      if (!this.running) break;
      // Another worker may claim the event once the lock expires: never be mid-request then.
      if (clock.nowMs() + requestTimeoutMs + margin > claim.lockUntilMs) break;
      next += 1;
      if (!sink) {
        deliveries.inc({ outcome: 'no_sink' });
        settlements.push({ kind: 'skipped', id: event.id, reason: NO_SINK_REASON });
        continue;
      }
      const refused = sink.refuses?.(event) ?? null;
      if (refused !== null) {
        deliveries.inc({ outcome: 'not_taken' });
        settlements.push({ kind: 'skipped', id: event.id, reason: refused });
        continue;
      }
      const attempt = event.attempts + 1;
      const target = sink;
      const outcome = await this.permits.run(async () => {
        const started = performance.now();
        const result = await target.deliver(event, attempt);
        deliverySeconds.observe((performance.now() - started) / 1000);
        return result;
      });
      if (this.aborted) return;
      if (outcome.kind === 'delivered') {
        deliveries.inc({ outcome: 'delivered' });
        attempts.observe(attempt);
        settlements.push({ kind: 'delivered', id: event.id });
        continue;
      }
      const log = { event: event.eventId, app: event.appCode, attempt, error: outcome.error };
      if (outcome.kind === 'failed' || exhausted(retry, attempt)) {
        deliveries.inc({ outcome: 'failed' });
        attempts.observe(attempt);
        this.logger.warn(log, 'outbox event failed for good');
        settlements.push({ kind: 'failed', id: event.id, error: outcome.error });
        continue;
      }
      deliveries.inc({ outcome: 'retryable' });
      this.logger.info(log, 'outbox delivery will be retried');
      settlements.push({
        kind: 'retryable',
        id: event.id,
        error: outcome.error,
        nextAttemptAtMs: clock.nowMs() + retryDelayMs(retry, attempt, this.deps.random),
      });
      break; // the room's later events wait for this one
    }
    release(next);
    await this.settle(claim, settlements);
  }

  /** Settlements of every room are written together (one transaction per flush). */
  private settle(claim: Claim, settlements: readonly Settlement[]): Promise<void> {
    if (this.aborted) return Promise.resolve();
    for (const settlement of settlements) this.pendingSettles.push({ claim, settlement });
    this.settling ??= this.flush();
    return this.settling;
  }

  private async flush(): Promise<void> {
    try {
      while (this.pendingSettles.length > 0 && !this.aborted) {
        const batch = this.pendingSettles.splice(0);
        try {
          const changed = await this.deps.store.settle(batch, this.deps.clock.nowMs());
          if (changed < batch.length) {
            this.metrics.deliveries.inc({ outcome: 'lost_claim' }, batch.length - changed);
            this.logger.warn(
              { lost: batch.length - changed },
              'outbox settlements found their claim taken over (lock expired)',
            );
          }
        } catch (err) {
          // The rows stay delivering until their lock expires; then they are claimed again.
          this.logger.error({ err, count: batch.length }, 'outbox settle failed');
        }
      }
    } finally {
      this.settling = null;
    }
  }

  private wakeUp(): void {
    this.wakeSignal = true;
    this.wake?.();
  }

  /** Waits `ms` whatever wakes the worker meanwhile; only stopping ends it early. */
  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.cutPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.cutPause = null;
  }

  private async sleep(ms: number): Promise<void> {
    if (!this.wakeSignal && this.running) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    this.wakeSignal = false;
  }
}

function byRoom(events: readonly ClaimedEvent[]): ClaimedEvent[][] {
  const rooms = new Map<string, ClaimedEvent[]>();
  for (const event of events) {
    const key = `${event.appCode}\u0000${event.roomId}`;
    const list = rooms.get(key);
    if (list) list.push(event);
    else rooms.set(key, [event]);
  }
  return [...rooms.values()];
}

/** Bounds requests in flight across rooms. */
class Semaphore {
  private readonly waiting: (() => void)[] = [];

  constructor(private free: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}
