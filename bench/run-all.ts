/**
 * `npm run bench`: runs every bench, one after another (never two at once: they would
 * measure each other), and writes `bench/REPORT.md`: per bench, the machine and time of its
 * run, its figures (its `name=value` lines) and its summary lines, and at the top the goals
 * the figures are held to. `BENCH_ONLY=cell,forward` runs a subset: their sections are
 * replaced and the other benches' sections of the existing report are kept as they were.
 * `BENCH_REPORT=<path>` writes elsewhere. A bench that fails is reported as failed with its
 * last lines, the others still run, and the exit code is 1.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goalsFor, parseFigures, type Figures } from './goals.js';
import { scaleTables } from './scale/report.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** In the order they run and appear; each is also `npm run bench:<name>`. */
const BENCHES: readonly { name: string; file: string; what: string }[] = [
  { name: 'cell', file: 'bench/cell.bench.ts', what: 'cell runtime vs the raw storage path' },
  { name: 'forward', file: 'bench/forward.bench.ts', what: 'gRPC forwarded vs direct calls' },
  { name: 'failover', file: 'bench/failover.bench.ts', what: 'rooms out of service per fault' },
  { name: 'fanout', file: 'bench/fanout.bench.ts', what: 'one room to 2,000 sockets; outbox' },
  { name: 'meeting', file: 'bench/meeting.bench.ts', what: 'meeting REST and WebSocket paths' },
  { name: 'media', file: 'bench/media.bench.ts', what: 'media server: routers, consumers' },
  { name: 'voice-media', file: 'bench/voice-media.bench.ts', what: 'voice-room audio' },
  {
    name: 'voice-room',
    file: 'bench/voice-room.bench.ts',
    what: 'voice-room chat to 2,000 sockets, seats under chat, gift rankings',
  },
  { name: 'dtx', file: 'bench/dtx.bench.ts', what: 'a silent microphone, DTX or not' },
  { name: 'recording', file: 'bench/recording.bench.ts', what: 'a meeting recording, per track' },
  {
    name: 'continuity',
    file: 'bench/continuity.bench.ts',
    what: 'join to first audio, a network switch, a node death: in Chromium',
  },
  {
    name: 'simulcast',
    file: 'bench/simulcast.bench.ts',
    what: 'a 9-tile meeting viewer downstream, simulcast on / off',
  },
  { name: 'big-room', file: 'bench/big-room.bench.ts', what: 'one room over several workers' },
  { name: 'scale', file: 'bench/scale.bench.ts', what: 'cost against size, per dimension' },
];

interface BenchRun {
  readonly name: string;
  readonly what: string;
  readonly ok: boolean;
  readonly seconds: number;
  readonly figures: Figures;
  readonly output: string[];
}

async function runBench(bench: (typeof BENCHES)[number]): Promise<BenchRun> {
  const started = performance.now();
  const output: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', bench.file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let partial = '';
  const collect = (chunk: string, stream: NodeJS.WriteStream) => {
    stream.write(chunk);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    output.push(...lines);
  };
  child.stdout.setEncoding('utf8').on('data', (c: string) => collect(c, process.stdout));
  child.stderr.setEncoding('utf8').on('data', (c: string) => collect(c, process.stderr));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (partial) output.push(partial);
  return {
    name: bench.name,
    what: bench.what,
    ok: code === 0,
    seconds: (performance.now() - started) / 1000,
    figures: parseFigures(output),
    output,
  };
}

function machine(): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2));
  return (
    `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ` +
    `${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}, ` +
    `load average ${load.join(' / ')} at the start`
  );
}

/** The lines a reader wants from a bench's output: its per-round and summary lines. */
function summaryLines(output: readonly string[]): string[] {
  return output.filter((l) => l.trim() !== '' && !/^[a-z][a-z0-9_]*=/.test(l.trim())).slice(-30);
}

const begin = (name: string) => `<!-- bench:${name} -->`;
const end = (name: string) => `<!-- /bench:${name} -->`;
const FIGURES_MARK = /<!-- figures (\{.*\}) -->/;

/** One bench's section, with its figures also kept as JSON for a later partial run. */
async function section(run: BenchRun, when: string, on: string): Promise<string> {
  const lines = [begin(run.name), `### ${run.name}: ${run.what}`, ''];
  lines.push(
    `\`npm run bench:${run.name}\`: ${run.ok ? 'ok' : '**failed**'}, ${run.seconds.toFixed(0)} s, run ${when} on ${on}.`,
    '',
    `<!-- figures ${JSON.stringify(run.figures)} -->`,
  );
  const plain = Object.entries(run.figures).filter(([key]) => !key.startsWith('scale_'));
  if (plain.length > 0) {
    lines.push('| Figure | Value |', '|---|---|');
    for (const [key, value] of plain) lines.push(`| \`${key}\` | ${value} |`);
    lines.push('');
  }
  // A bench's own plots: bench/plots/bench-<name>-*.svg (the scale bench's are per dimension).
  const own = await readdir(path.join(ROOT, 'bench', 'plots')).catch(() => [] as string[]);
  for (const plot of own.filter((p) => p.startsWith(`bench-${run.name}-`) && p.endsWith('.svg'))) {
    lines.push(`![${plot}](plots/${plot})`, '');
  }
  if (run.name === 'scale') {
    const plots = await readdir(path.join(ROOT, 'bench', 'plots')).catch(() => [] as string[]);
    lines.push(
      ...scaleTables(run.figures, (dimension) =>
        plots.filter((p) => p.startsWith(`${dimension}-`) && p.endsWith('.svg')).sort(),
      ),
    );
  }
  lines.push('```', ...summaryLines(run.output), '```', end(run.name));
  return lines.join('\n');
}

/** The sections of an existing report, by bench name (empty when there is none). */
function keptSections(existing: string): Map<string, { text: string; figures: Figures }> {
  const kept = new Map<string, { text: string; figures: Figures }>();
  for (const bench of BENCHES) {
    const from = existing.indexOf(begin(bench.name));
    const to = existing.indexOf(end(bench.name));
    if (from < 0 || to < from) continue;
    const text = existing.slice(from, to + end(bench.name).length);
    const json = FIGURES_MARK.exec(text)?.[1];
    kept.set(bench.name, { text, figures: json ? (JSON.parse(json) as Figures) : {} });
  }
  return kept;
}

function report(sections: { text: string; figures: Figures }[], profiles: string): string {
  const all: Figures = Object.assign({}, ...sections.map((s) => s.figures)) as Figures;
  return [
    '# Benchmark report',
    '',
    'Written by `npm run bench` (bench/run-all.ts). Each section says when and on what machine',
    'its bench ran. Machines here are shared and noisy: quote the ratios (each the median of',
    'per-pair ratios of interleaved short rounds, see bench/load.ts) and medians, not single',
    'absolute rates. How each bench works: [docs/benchmarks.md](../docs/benchmarks.md).',
    '',
    '## Goals',
    '',
    '| Figure | This report | Goal | Met |',
    '|---|---|---|---|',
    ...goalsFor(all).map(
      (g) => `| ${g.label} (\`${g.key}\`) | ${g.value ?? 'not measured'} | ${g.goal} | ${g.met} |`,
    ),
    '',
    '## Benches',
    '',
    sections.map((s) => s.text).join('\n\n'),
    '',
    // Hand-written (bench/PROFILES.md): what profiling found and what it changed.
    profiles.trim(),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
  const target = process.env.BENCH_REPORT ?? path.join(ROOT, 'bench', 'REPORT.md');
  const kept = keptSections(await readFile(target, 'utf8').catch(() => ''));
  const when = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const on = machine();
  const fresh = new Map<string, { text: string; figures: Figures }>();
  const failed: string[] = [];
  for (const bench of BENCHES.filter((b) => !only || only.includes(b.name))) {
    console.log(`\n==> bench:${bench.name} (${bench.what})`);
    const run = await runBench(bench);
    if (!run.ok) failed.push(run.name);
    fresh.set(bench.name, { text: await section(run, when, on), figures: run.figures });
  }
  const sections = BENCHES.flatMap((b) => fresh.get(b.name) ?? kept.get(b.name) ?? []);
  const profiles = await readFile(path.join(ROOT, 'bench', 'PROFILES.md'), 'utf8').catch(() => '');
  await writeFile(target, report(sections, profiles));
  console.log(`\nreport written to ${path.relative(process.cwd(), target)}`);
  if (failed.length > 0) {
    console.error(`benches failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

await main();
