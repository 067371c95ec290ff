/** A closed-loop load generator: `concurrency` workers issue ops back to back for a time. */
export interface LoadResult {
  readonly ops: number;
  readonly errors: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export async function runLoad(
  concurrency: number,
  durationMs: number,
  op: (worker: number, i: number) => Promise<unknown>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        try {
          await op(worker, i++);
          latencies.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ops: latencies.length,
    errors,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
  };
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export function describeRun(name: string, r: LoadResult): string {
  return `${name.padEnd(34)} ${r.perSecond.toFixed(0).padStart(8)} cmd/s   p50 ${r.p50Ms
    .toFixed(2)
    .padStart(7)} ms   p99 ${r.p99Ms.toFixed(2).padStart(7)} ms   errors ${r.errors}`;
}

/**
 * BENCH_ROUNDS (10) pairs of BENCH_SECONDS (1.5 s) each, for every interleaved comparison.
 * Single pairs here spread by ±20% on a shared machine; ten pairs keep the median from
 * hanging on one or two of them.
 */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);

/** Two configurations measured in interleaved rounds, and their paired comparison. */
export interface Interleaved {
  readonly a: LoadResult[];
  readonly b: LoadResult[];
  /** Median of the per-round ratios b/a (throughput): each pair ran back to back. */
  readonly ratio: number;
  /** Every round's b/a, in order, so a reader sees the spread. */
  readonly ratios: number[];
}

/**
 * Runs `a` and `b` in `rounds` short back-to-back pairs, swapping which goes first each
 * round (A B, B A, A B, …), and compares them pair by pair. On a shared machine a burst of
 * other work lands on one pair, not on every round of one side, so the median of the
 * per-pair ratios is not skewed the way a ratio of two medians is (that once reported a
 * forwarded call as faster than a direct one).
 */
export async function interleave(
  rounds: number,
  a: () => Promise<LoadResult>,
  b: () => Promise<LoadResult>,
  onRound?: (round: number, a: LoadResult, b: LoadResult) => void,
): Promise<Interleaved> {
  const as: LoadResult[] = [];
  const bs: LoadResult[] = [];
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    let ra: LoadResult;
    let rb: LoadResult;
    if (round % 2 === 1) {
      ra = await a();
      rb = await b();
    } else {
      rb = await b();
      ra = await a();
    }
    as.push(ra);
    bs.push(rb);
    ratios.push(rb.perSecond / ra.perSecond);
    onRound?.(round, ra, rb);
  }
  return { a: as, b: bs, ratio: median(ratios), ratios };
}

/** `0.91 [0.88 0.93 …]`: the median and every pair's ratio. */
export function describeRatios(r: Interleaved): string {
  return `${r.ratio.toFixed(3)} [${r.ratios.map((x) => x.toFixed(2)).join(' ')}]`;
}
