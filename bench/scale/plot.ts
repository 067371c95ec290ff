/**
 * A line plot of figures against size as a small self-contained SVG (no dependency: the
 * bench draws its own numbers). The x axis is logarithmic when the sizes span 20× or more
 * (1k / 10k / 100k rooms), so equal steps in size look equal; the y axis starts at 0, so
 * a reader judges growth by eye without being misled by a cropped axis.
 */

export interface Series {
  readonly label: string;
  readonly points: readonly { x: number; y: number }[];
}

const WIDTH = 560;
const HEIGHT = 320;
const MARGIN = { left: 72, right: 16, top: 36, bottom: 48 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

function escape(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!,
  );
}

/** 12,000 → `12k`, 0.25 → `0.25`. */
export function shortNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${+(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
  if (abs >= 10 || value === 0) return `${Math.round(value)}`;
  return `${+value.toPrecision(2)}`;
}

/** A round number ≥ `max`/`ticks` for the y grid: 1, 2 or 5 × 10^n. */
function step(max: number, ticks: number): number {
  const raw = max / ticks;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

export function linePlot(options: {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
}): string {
  const points = options.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.y));
  const xs = [...new Set(points.map((p) => p.x))].sort((a, b) => a - b);
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const minX = xs[0] ?? 1;
  const maxX = xs.at(-1) ?? 1;
  const logX = minX > 0 && maxX / minX >= 20;
  const fx = (x: number) => {
    if (maxX === minX) return MARGIN.left + plotW / 2;
    const t = logX
      ? (Math.log(x) - Math.log(minX)) / (Math.log(maxX) - Math.log(minX))
      : (x - minX) / (maxX - minX);
    return MARGIN.left + t * plotW;
  };
  const yStep = step(Math.max(...points.map((p) => p.y), 1e-9) * 1.05, 5);
  const maxY = yStep * Math.ceil((Math.max(...points.map((p) => p.y), 1e-9) * 1.05) / yStep);
  const fy = (y: number) => MARGIN.top + plotH - (y / maxY) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="14">${escape(options.title)}</text>`,
  ];
  for (let y = 0; y <= maxY + yStep / 2; y += yStep) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${fy(y)}" y2="${fy(y)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${fy(y) + 4}" text-anchor="end">${shortNumber(y)}</text>`,
    );
  }
  for (const x of xs) {
    parts.push(
      `<line x1="${fx(x)}" x2="${fx(x)}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH + 4}" stroke="#333"/>`,
      `<text x="${fx(x)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${shortNumber(x)}</text>`,
    );
  }
  parts.push(
    `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 10}" text-anchor="middle">${escape(options.xLabel)}${logX ? ' (log scale)' : ''}</text>`,
    `<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(options.yLabel)}</text>`,
  );
  options.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const drawn = s.points.filter((p) => Number.isFinite(p.y));
    if (drawn.length > 1) {
      const path = drawn.map((p) => `${fx(p.x).toFixed(1)},${fy(p.y).toFixed(1)}`).join(' ');
      parts.push(`<polyline points="${path}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    }
    for (const p of drawn) {
      parts.push(
        `<circle cx="${fx(p.x).toFixed(1)}" cy="${fy(p.y).toFixed(1)}" r="3.5" fill="${colour}"/>`,
      );
    }
    const legendY = MARGIN.top + 4 + i * 16;
    parts.push(
      `<rect x="${MARGIN.left + 10}" y="${legendY}" width="12" height="3" fill="${colour}"/>`,
      `<text x="${MARGIN.left + 28}" y="${legendY + 5}">${escape(s.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
