/**
 * The `rooms` dimension's load and its peaks, apart from the host so they are unit-tested:
 * every room touched once by a closed loop of workers, and the peaks of a sampled process.
 */

/**
 * Touches rooms 0..count-1, each once, `concurrency` at a time; resolves with each touch's
 * latency (ms), sorted. A failed touch fails the run: every room must have been touched.
 */
export async function touchAll(
  count: number,
  concurrency: number,
  touch: (i: number) => Promise<unknown>,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const started = performance.now();
        await touch(i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

/** The highest RSS and loaded-cell count seen by {@link MemoryPeaks.sample}. */
export class MemoryPeaks {
  rssPeak = 0;
  loadedPeak = 0;

  constructor(
    private readonly loaded: () => number,
    private readonly rss: () => number = () => process.memoryUsage.rss(),
  ) {}

  sample(): void {
    this.rssPeak = Math.max(this.rssPeak, this.rss());
    this.loadedPeak = Math.max(this.loadedPeak, this.loaded());
  }
}
