/**
 * `npm run bench`: runs every bench, one after another (never two at once: they would
 * measure each other), and writes `bench/REPORT.md`: the machine, each bench's figures (its
 * `name=value` lines), the goals they are held to, and each bench's summary lines.
 * `BENCH_ONLY=cell,forward` runs a subset (the report then holds only those);
 * `BENCH_REPORT=<path>` writes the report elsewhere. A bench that fails is reported as
 * failed with its last lines, the others still run, and the exit code is 1.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goalsFor, parseFigures, type Figures } from './goals.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** In the order they run; each is also `npm run bench:<name>`. */
const BENCHES: readonly { name: string; file: string; what: string }[] = [
  { name: 'cell', file: 'bench/cell.bench.ts', what: 'cell runtime vs the raw storage path' },
  { name: 'forward', file: 'bench/forward.bench.ts', what: 'gRPC forwarded vs direct calls' },
  { name: 'failover', file: 'bench/failover.bench.ts', what: 'rooms out of service per fault' },
  { name: 'fanout', file: 'bench/fanout.bench.ts', what: 'one room to 2,000 sockets; outbox' },
  { name: 'meeting', file: 'bench/meeting.bench.ts', what: 'meeting REST and WebSocket paths' },
  { name: 'media', file: 'bench/media.bench.ts', what: 'media server: routers, consumers' },
  { name: 'voice-media', file: 'bench/voice-media.bench.ts', what: 'voice-room audio' },
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
  const figures = parseFigures(output);
  return {
    name: bench.name,
    what: bench.what,
    ok: code === 0,
    seconds: (performance.now() - started) / 1000,
    figures,
    output,
  };
}

function machine(): string[] {
  const cpus = os.cpus();
  const load = os.loadavg().map((l) => l.toFixed(2));
  return [
    `- CPU: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}`,
    `- Memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; Node.js ${process.version}; ${os.type()} ${os.release()}`,
    `- Load average when the run started: ${load.join(' / ')} (1 / 5 / 15 min)`,
  ];
}

/** The lines a reader wants from a bench's output: its per-round and summary lines. */
function summaryLines(output: readonly string[]): string[] {
  return output.filter((l) => l.trim() !== '' && !/^[a-z][a-z0-9_]*=/.test(l.trim())).slice(-24);
}

function report(runs: readonly BenchRun[], header: string[]): string {
  const all: Figures = Object.assign({}, ...runs.map((r) => r.figures)) as Figures;
  const lines = [
    '# Benchmark report',
    '',
    'Written by `npm run bench` (bench/run-all.ts); every figure below is from one run on the machine',
    'named here. Machines here are shared and noisy: quote the ratios (each is the median of',
    'per-pair ratios of interleaved short rounds, see bench/load.ts) and medians, not single',
    'absolute rates. How each bench works: docs/benchmarks.md.',
    '',
    ...header,
    '',
    '## Goals',
    '',
    '| Figure | This run | Goal | Met |',
    '|---|---|---|---|',
    ...goalsFor(all).map(
      (g) => `| ${g.label} (\`${g.key}\`) | ${g.value ?? 'not measured'} | ${g.goal} | ${g.met} |`,
    ),
    '',
    '## Benches',
  ];
  for (const run of runs) {
    lines.push('', `### ${run.name}: ${run.what}`, '');
    lines.push(
      `\`npm run bench:${run.name}\`, ${run.seconds.toFixed(0)} s, ${run.ok ? 'ok' : '**failed**'}.`,
      '',
    );
    const entries = Object.entries(run.figures);
    if (entries.length > 0) {
      lines.push('| Figure | Value |', '|---|---|');
      for (const [key, value] of entries) lines.push(`| \`${key}\` | ${value} |`);
      lines.push('');
    }
    lines.push('```', ...summaryLines(run.output), '```');
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
  const chosen = BENCHES.filter((b) => !only || only.includes(b.name));
  const header = [
    `Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${chosen.length} benches.`,
    '',
    ...machine(),
  ];
  const runs: BenchRun[] = [];
  for (const bench of chosen) {
    console.log(`\n==> bench:${bench.name} (${bench.what})`);
    runs.push(await runBench(bench));
  }
  const target = process.env.BENCH_REPORT ?? path.join(ROOT, 'bench', 'REPORT.md');
  await writeFile(target, report(runs, header));
  console.log(`\nreport written to ${path.relative(process.cwd(), target)}`);
  const failed = runs.filter((r) => !r.ok).map((r) => r.name);
  if (failed.length > 0) {
    console.error(`benches failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

await main();
