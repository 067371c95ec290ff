/** Test-only: the Prometheus text format as a scraper reads it, and PromQL's metric names. */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Scrape {
  readonly samples: readonly Sample[];
  /** `# TYPE` of each family (a histogram's samples are `_bucket`, `_sum`, `_count`). */
  readonly types: ReadonlyMap<string, string>;
  /** The samples of `name` whose labels include `labels`. */
  find(name: string, labels?: Readonly<Record<string, string>>): Sample[];
  /** The value of the one such sample (throws when there is none or several). */
  value(name: string, labels?: Readonly<Record<string, string>>): number;
}

export function parsePrometheusText(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const find = (name: string, labels: Readonly<Record<string, string>> = {}) =>
    samples.filter(
      (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
  return {
    samples,
    types,
    find,
    value(name, labels = {}) {
      const found = find(name, labels);
      if (found.length !== 1) {
        throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
      }
      return found[0]!.value;
    },
  };
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

/**
 * The metric names a PromQL expression reads, and the labels it groups by. Strings, label
 * matchers and range selectors are removed first; an identifier before `(` is a function or
 * an aggregation.
 */
export function promqlNames(expr: string): { metrics: string[]; groupLabels: string[] } {
  const groupLabels: string[] = [];
  let rest = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without)\s*\(([^)]*)\)/g, (_, labels: string) => {
      groupLabels.push(
        ...labels
          .split(',')
          .map((l) => l.trim())
          .filter(Boolean),
      );
      return '';
    });
  rest = rest.replace(/\b[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*\()/g, '');
  const metrics = [...rest.matchAll(/(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .map((m) => m[0])
    .filter((word) => !PROMQL_WORDS.has(word));
  return { metrics, groupLabels };
}
