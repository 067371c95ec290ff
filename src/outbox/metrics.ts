/** The outbox relay's Prometheus metrics, on the registry it is given (the host's). */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface OutboxMetrics {
  readonly registry: Registry;
  readonly deliveries: Counter<'outcome'>;
  /** Attempts an event took, observed when it ends (delivered or failed). */
  readonly attempts: Histogram;
  readonly deliverySeconds: Histogram;
}

/**
 * `oldestUndeliveredAtMs` is read at scrape time (one indexed query per scrape, by every
 * node: each reports the same table-wide age).
 */
export function createOutboxMetrics(
  registry: Registry = new Registry(),
  oldestUndeliveredAtMs?: () => Promise<number | null>,
  nowMs: () => number = Date.now,
): OutboxMetrics {
  const registers = [registry];
  new Gauge({
    name: 'rooms_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest outbox event not yet delivered or failed (0 when none)',
    registers,
    async collect() {
      if (!oldestUndeliveredAtMs) return;
      try {
        const oldest = await oldestUndeliveredAtMs();
        this.set(oldest === null ? 0 : Math.max(0, (nowMs() - oldest) / 1000));
      } catch {
        // A failed scrape query leaves the last value; the relay logs database errors.
      }
    },
  });
  return {
    registry,
    deliveries: new Counter({
      name: 'rooms_outbox_deliveries_total',
      help: 'Outbox delivery attempts by outcome (no_sink: the app has no webhook; not_taken: its webhook does not take the event (crowd events); lost_claim: settled after the lock was taken over)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    attempts: new Histogram({
      name: 'rooms_outbox_delivery_attempts',
      help: 'Attempts an outbox event took until delivered or failed',
      buckets: [1, 2, 3, 4, 5, 6, 8, 10, 15, 20],
      registers,
    }),
    deliverySeconds: new Histogram({
      name: 'rooms_outbox_delivery_seconds',
      help: 'Duration of one webhook request',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}
