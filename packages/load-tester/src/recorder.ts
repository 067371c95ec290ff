/**
 * What a load run measured: latencies per operation, refusals and failures by reason, and
 * the frames the listeners were owed against those they got.
 */
import { ApiError, RealtimeError } from '../../client/src/index.js';

/** The `q` quantile (0–1) of sorted values (nearest rank); 0 when there are none. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

/** Why a call failed, as the report counts it: the API's stable reason when there is one. */
export function reasonOf(error: unknown): string {
  if (error instanceof ApiError) {
    const reason: string | undefined = (error as ApiError<string>).reason;
    return reason ?? `HTTP_${error.status}`;
  }
  if (error instanceof RealtimeError) return error.reason ?? 'WS_ERROR';
  return error instanceof Error ? error.name || 'Error' : 'Error';
}

export class Recorder {
  private readonly latencies = new Map<string, number[]>();
  readonly errors = new Map<string, number>();
  /** Frames owed to the listeners (a delivered command × its room's listeners) and got. */
  framesOwed = 0;
  framesGot = 0;
  /** `--media`: RTP packets owed to the listeners (sent after their consumer resumed) and got. */
  packetsOwed = 0;
  packetsGot = 0;
  /** `--media`: from a producer's announcement to its first packet at a listener, in ms. */
  readonly firstAudio: number[] = [];

  /** Times `run` as `operation`; a failure is counted by its reason and answers undefined. */
  async time<T>(operation: string, run: () => Promise<T>): Promise<T | undefined> {
    const started = performance.now();
    try {
      const result = await run();
      const list = this.latencies.get(operation) ?? [];
      list.push(performance.now() - started);
      this.latencies.set(operation, list);
      return result;
    } catch (error) {
      const key = `${operation}:${reasonOf(error)}`;
      this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
      return undefined;
    }
  }

  /** Operations that succeeded, by name, with their latencies sorted. */
  operations(): Map<string, number[]> {
    return new Map(
      [...this.latencies].map(([name, list]) => [name, [...list].sort((a, b) => a - b)]),
    );
  }

  get errorCount(): number {
    return [...this.errors.values()].reduce((a, b) => a + b, 0);
  }
}
