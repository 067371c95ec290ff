/**
 * One dimension of `npm run bench:scale`: the same work measured at three or four sizes, so
 * a reader sees how its cost grows (linearly or worse). Each dimension is a module exporting
 * a {@link ScaleDimension}; bench/scale.bench.ts runs them and prints, per size and figure,
 * `scale_<dimension>_<size>_<figure>=<value>`, then draws each plotted figure against size
 * (bench/plots/<dimension>-<figure>.svg).
 */

/** A figure's values at one size, by figure name (snake_case, unit in the name: `p99_ms`). */
export type ScaleFigures = Record<string, number>;

export interface PlottedFigure {
  /** A key of the figures a size returns. */
  readonly figure: string;
  /** The axis label, e.g. `frames/s` or `p99 (ms)`. */
  readonly label: string;
  /** Figures drawn on the same plot, e.g. ours beside the bare baseline. */
  readonly with?: readonly { figure: string; label: string }[];
}

export interface ScaleDimension {
  /** snake_case: `fanout`, `connections`, `rooms`, `meetings`. */
  readonly name: string;
  /** One line: what is measured, against what baseline. */
  readonly what: string;
  /** What the size counts, e.g. `sockets`. */
  readonly unit: string;
  /** Ascending; overridden by BENCH_SCALE_<NAME>_SIZES=1000,10000. */
  readonly sizes: readonly number[];
  readonly plots: readonly PlottedFigure[];
  /** Measures one size from scratch (no state shared with the other sizes). */
  run(size: number): Promise<ScaleFigures>;
}

/** The sizes to run: the dimension's, or BENCH_SCALE_<NAME>_SIZES. */
export function sizesOf(dimension: ScaleDimension, env = process.env): number[] {
  const override = env[`BENCH_SCALE_${dimension.name.toUpperCase()}_SIZES`];
  if (!override) return [...dimension.sizes];
  const sizes = override.split(',').map((s) => Number(s.trim()));
  if (sizes.some((s) => !Number.isInteger(s) || s <= 0)) {
    throw new Error(`BENCH_SCALE_${dimension.name.toUpperCase()}_SIZES: positive integers`);
  }
  return sizes;
}

/** `scale_fanout_2000_frames_per_s` */
export function figureKey(dimension: string, size: number, figure: string): string {
  return `scale_${dimension}_${size}_${figure}`;
}

/** The inverse of {@link figureKey}; null for any other key. */
export function parseFigureKey(
  key: string,
): { dimension: string; size: number; figure: string } | null {
  const match = /^scale_([a-z]+)_([0-9]+)_([a-z][a-z0-9_]*)$/.exec(key);
  if (!match) return null;
  return { dimension: match[1]!, size: Number(match[2]), figure: match[3]! };
}
