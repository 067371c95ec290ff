/**
 * The scale bench's part of bench/REPORT.md: per dimension, a table of its figures by size
 * and the plots bench/scale.bench.ts drew.
 */
import type { Figures } from '../goals.js';
import { parseFigureKey } from './dimension.js';

export function scaleTables(figures: Figures, plotsOf: (dimension: string) => string[]): string[] {
  const byDimension = new Map<string, Map<number, Map<string, number>>>();
  for (const [key, value] of Object.entries(figures)) {
    const parsed = parseFigureKey(key);
    if (!parsed) continue;
    const sizes = byDimension.get(parsed.dimension) ?? new Map<number, Map<string, number>>();
    byDimension.set(parsed.dimension, sizes);
    const row = sizes.get(parsed.size) ?? new Map<string, number>();
    sizes.set(parsed.size, row);
    row.set(parsed.figure, value);
  }
  const lines: string[] = [];
  for (const [dimension, sizes] of byDimension) {
    const columns = [...new Set([...sizes.values()].flatMap((row) => [...row.keys()]))];
    lines.push(`#### ${dimension}`, '');
    lines.push(`| size | ${columns.join(' | ')} |`, `|---|${columns.map(() => '---').join('|')}|`);
    for (const [size, row] of [...sizes].sort((a, b) => a[0] - b[0])) {
      lines.push(
        `| ${size} | ${columns.map((c) => (row.has(c) ? String(row.get(c)) : '–')).join(' | ')} |`,
      );
    }
    lines.push('');
    for (const plot of plotsOf(dimension))
      lines.push(`![${dimension}: ${plot}](plots/${plot})`, '');
  }
  return lines;
}
