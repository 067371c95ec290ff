/**
 * `BENCH_SCALE_RERUN=logs npm run bench:scale`: runs only the named dimensions and keeps the
 * other dimensions' figures of the existing report. bench/run-all.ts rewrites the whole
 * scale section from the figures the scale bench prints, so `BENCH_SCALE_ONLY` alone would
 * drop every dimension it skips from bench/REPORT.md; here each dimension not rerun is
 * replaced by a stand-in that prints, as its figures, the ones the report's scale section
 * holds for it (its `<!-- figures {...} -->` line), and draws no plot (its SVGs stay).
 * Pure but for reading the report, so it is unit-tested.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFigureKey, type ScaleDimension, type ScaleFigures } from './dimension.js';

const REPORT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'REPORT.md');

/** The report's scale section (`<!-- bench:scale -->`), or ''. */
function scaleSection(report: string): string {
  const from = report.indexOf('<!-- bench:scale -->');
  const to = report.indexOf('<!-- /bench:scale -->');
  return from < 0 || to < from ? '' : report.slice(from, to);
}

/** The figures of the report's scale section, or none. */
export function scaleSectionFigures(report: string): Record<string, number> {
  const json = /<!-- figures (\{.*\}) -->/.exec(scaleSection(report))?.[1];
  return json ? (JSON.parse(json) as Record<string, number>) : {};
}

const KEPT_FROM = 'not rerun: the figures of the run ';

/**
 * When and where `dimension`'s figures in the report were measured: what its stand-in said
 * if it was kept before (its `--- name:` line among the summary lines), else the scale
 * section's own run (`run <when> on <machine>, load average …`); null when it cannot tell.
 */
export function measuredIn(report: string, dimension: string): string | null {
  const section = scaleSection(report);
  for (const line of section.split('\n')) {
    if (!line.startsWith(`--- ${dimension}: `)) continue;
    const at = line.lastIndexOf(`(${KEPT_FROM}`);
    if (at >= 0) return line.slice(at + KEPT_FROM.length + 1, -1);
  }
  // The section's own run, unless it was itself a rerun: then the header names the rerun
  // ones' run, and this dimension's line fell off the summary's tail.
  if (section.includes(KEPT_FROM)) return null;
  return /, run (.+? on .+?), load average/.exec(section)?.[1] ?? null;
}

/** One dimension's figures by size, from a figures map. */
export function figuresBySize(
  figures: Record<string, number>,
  dimension: string,
): Map<number, ScaleFigures> {
  const bySize = new Map<number, ScaleFigures>();
  for (const [key, value] of Object.entries(figures)) {
    const parsed = parseFigureKey(key);
    if (parsed?.dimension !== dimension) continue;
    const row = bySize.get(parsed.size) ?? {};
    row[parsed.figure] = value;
    bySize.set(parsed.size, row);
  }
  return bySize;
}

/** A stand-in that answers `dimension`'s kept figures instead of measuring; null if none. */
export function keptDimension(
  dimension: ScaleDimension,
  figures: Record<string, number>,
  measured: string | null = null,
): ScaleDimension | null {
  const bySize = figuresBySize(figures, dimension.name);
  if (bySize.size === 0) return null;
  return {
    name: dimension.name,
    what: `${dimension.what} (${measured ? KEPT_FROM + measured : 'not rerun: the figures of the existing report'})`,
    unit: dimension.unit,
    sizes: [...bySize.keys()].sort((a, b) => a - b),
    plots: [],
    run: (size) => Promise.resolve(bySize.get(size) ?? {}),
  };
}

/**
 * The dimensions to run: all of them without `BENCH_SCALE_RERUN`; with it, the named ones
 * and, in their place, stand-ins for the others that have figures in the report.
 */
export function rerunOnly(
  all: readonly ScaleDimension[],
  env: NodeJS.ProcessEnv = process.env,
  readReport: () => string = () => readFileSync(env.BENCH_REPORT ?? REPORT, 'utf8'),
): ScaleDimension[] {
  const rerun = env.BENCH_SCALE_RERUN?.split(',').map((s) => s.trim());
  if (!rerun) return [...all];
  const unknown = rerun.filter((name) => !all.some((d) => d.name === name));
  if (unknown.length > 0) throw new Error(`BENCH_SCALE_RERUN: no dimension ${unknown.join(', ')}`);
  let report = '';
  try {
    report = readReport();
  } catch {
    // No report yet: nothing to keep.
  }
  const figures = scaleSectionFigures(report);
  return all.flatMap((d) =>
    rerun.includes(d.name) ? [d] : (keptDimension(d, figures, measuredIn(report, d.name)) ?? []),
  );
}
