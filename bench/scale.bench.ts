/**
 * `npm run bench:scale`: each dimension of bench/scale/ at three or four sizes, one after
 * another, printing `scale_<dimension>_<size>_<figure>=<value>` per size and figure and
 * drawing each plotted figure against size into bench/plots/<dimension>-<figure>.svg.
 * `BENCH_SCALE_ONLY=fanout,rooms` runs some dimensions; `BENCH_SCALE_<NAME>_SIZES=500,2000`
 * other sizes. (Run through `npm run bench:scale`, the figures and plots also land in
 * bench/REPORT.md; see bench/run-all.ts.)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { figureKey, sizesOf, type ScaleDimension, type ScaleFigures } from './scale/dimension.js';
import { DIMENSIONS } from './scale/dimensions.js';
import { linePlot } from './scale/plot.js';

const PLOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'plots');

async function runDimension(dimension: ScaleDimension): Promise<Map<number, ScaleFigures>> {
  const results = new Map<number, ScaleFigures>();
  console.log(`\n--- ${dimension.name}: ${dimension.what}`);
  for (const size of sizesOf(dimension)) {
    const started = performance.now();
    let figures: ScaleFigures;
    try {
      figures = await dimension.run(size);
    } catch (error) {
      // One size failing (e.g. the machine's limit) must not hide the others' figures.
      console.log(`${dimension.name} at ${size} ${dimension.unit} failed: ${String(error)}`);
      figures = { failed: 1 };
    }
    results.set(size, figures);
    console.log(
      `${dimension.name} at ${size} ${dimension.unit} (${((performance.now() - started) / 1000).toFixed(0)} s): ` +
        Object.entries(figures)
          .map(([k, v]) => `${k} ${+v.toFixed(3)}`)
          .join(', '),
    );
    for (const [figure, value] of Object.entries(figures)) {
      console.log(`${figureKey(dimension.name, size, figure)}=${+value.toFixed(3)}`);
    }
  }
  return results;
}

async function plot(dimension: ScaleDimension, results: Map<number, ScaleFigures>): Promise<void> {
  await mkdir(PLOTS, { recursive: true });
  const seriesOf = (figure: string, label: string) => ({
    label,
    points: [...results].flatMap(([x, f]) =>
      f[figure] === undefined ? [] : [{ x, y: f[figure] }],
    ),
  });
  for (const p of dimension.plots) {
    const svg = linePlot({
      title: `${dimension.name}: ${p.label} against ${dimension.unit}`,
      xLabel: dimension.unit,
      yLabel: p.label,
      series: [
        seriesOf(p.figure, p.figure),
        ...(p.with ?? []).map((w) => seriesOf(w.figure, w.label)),
      ],
    });
    await writeFile(path.join(PLOTS, `${dimension.name}-${p.figure}.svg`), svg);
  }
}

async function main(): Promise<void> {
  const only = process.env.BENCH_SCALE_ONLY?.split(',').map((s) => s.trim());
  for (const dimension of DIMENSIONS) {
    if (only && !only.includes(dimension.name)) continue;
    await plot(dimension, await runDimension(dimension));
  }
}

await main();
process.exit(0);
