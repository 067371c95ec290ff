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
