/** The runtime's Prometheus metrics, on a registry per host so hosts can share a process. */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface CellMetrics {
  readonly registry: Registry;
  /** Per room kind (`voice_room`, `meeting`): a kind registered on the host shows 0. */
  readonly cellsLoaded: Gauge<'kind'>;
  /** Its `_count` is the batches decided, its `_sum` the commands they held. */
  readonly batchSize: Histogram;
  /** Transactions committed with rows (a batch that changed nothing writes none). */
  readonly commits: Counter;
  /** Commands decided in committed batches: `applied` (a new version), `noop`, `refused`. */
  readonly commands: Counter<'outcome'>;
  readonly commitSeconds: Histogram;
  readonly fenced: Counter;
  readonly lockRetries: Counter;
  /** Batches decided behind one in the database: `committed`, or `decided_again` later. */
  readonly pipelined: Counter<'outcome'>;
  readonly leaseRenewals: Counter<'outcome'>;
  readonly timersFired: Counter;
}

export function createCellMetrics(registry = new Registry()): CellMetrics {
  const registers = [registry];
  const metrics: CellMetrics = {
    registry,
    cellsLoaded: new Gauge({
      name: 'rooms_cells_loaded',
      help: 'Cells loaded on this node, by room kind',
      labelNames: ['kind'] as const,
      registers,
    }),
    commits: new Counter({
      name: 'rooms_cell_commits_total',
      help: 'Commit transactions that wrote rows (log, outcomes, outbox)',
      registers,
    }),
    commands: new Counter({
      name: 'rooms_cell_commands_total',
      help: 'Commands decided in committed batches, by outcome (applied, noop, refused)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    batchSize: new Histogram({
      name: 'rooms_cell_batch_size',
      help: 'Commands decided per commit transaction (group commit)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      registers,
    }),
    commitSeconds: new Histogram({
      name: 'rooms_cell_commit_seconds',
      help: 'Time from batch start to COMMIT',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    fenced: new Counter({
      name: 'rooms_cell_fenced_total',
      help: 'Cells dropped because their lease or SQL fence was lost',
      registers,
    }),
    lockRetries: new Counter({
      name: 'rooms_cell_lock_retries_total',
      help: 'Batches run again after the database rolled them back on a deadlock or lock wait timeout',
      registers,
    }),
    pipelined: new Counter({
      name: 'rooms_cell_pipelined_batches_total',
      help: 'Batches decided while the one before was in the database, by outcome (committed, decided_again)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    leaseRenewals: new Counter({
      name: 'rooms_lease_renewals_total',
      help: 'Lease renewals by outcome',
      labelNames: ['outcome'] as const,
      registers,
    }),
    timersFired: new Counter({
      name: 'rooms_cell_timers_fired_total',
      help: 'Deadline commands submitted by the timer worker',
      registers,
    }),
  };
  // Both series exist from the start: 0 on a store that does not pipeline (SQLite).
  for (const outcome of ['committed', 'decided_again']) metrics.pipelined.inc({ outcome }, 0);
  return metrics;
}
