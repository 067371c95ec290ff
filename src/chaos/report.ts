/**
 * The run's report: the seed, faults per type, commands sent / acknowledged / retried, the
 * availability gap per fault type against its target, and each invariant's result with its
 * first counterexamples. Printed as markdown and written as report.json and report.md.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { InvariantResult } from './check/types.js';
import type { InjectedFault } from './faults.js';
import type { FaultGap, GapSummary } from './gaps.js';
import { firstAnswer, type RequestRecord } from './history.js';

export interface CommandCounts {
  readonly api: string;
  readonly sent: number;
  /** A final answer came: a success or a refusal. */
  readonly acknowledged: number;
  readonly succeeded: number;
  readonly refused: number;
  /** No final answer before the client gave up: outcome unknown to the client. */
  readonly unknown: number;
  /** Needed more than one attempt (UNAVAILABLE, timeout, connection error). */
  readonly retried: number;
  /** Sent once more after its answer, as after a lost reply. */
  readonly resent: number;
  readonly attempts: number;
}

export interface ChaosReport {
  readonly seed: number;
  readonly durationMs: number;
  readonly startedAt: string;
  readonly faults: Readonly<Record<string, number>>;
  readonly commands: readonly CommandCounts[];
  readonly gaps: readonly GapSummary[];
  readonly faultGaps: readonly FaultGap[];
  readonly invariants: readonly InvariantResult[];
  /** A workload loop that could not go on (e.g. its room was never created). */
  readonly errors: readonly string[];
  readonly pass: boolean;
}

export function countCommands(requests: readonly RequestRecord[]): CommandCounts[] {
  const apis = ['voice', 'meeting', 'topup', 'rtc'];
  const rows = apis.map((api) => {
    const of = requests.filter((r) => r.api === api);
    const answers = of.map(firstAnswer);
    return {
      api,
      sent: of.length,
      acknowledged: answers.filter((a) => a !== null).length,
      succeeded: answers.filter((a) => a?.ok).length,
      refused: answers.filter((a) => a !== null && !a.ok).length,
      unknown: answers.filter((a) => a === null).length,
      retried: of.filter((r) => r.attempts.filter((a) => !a.resend).length > 1).length,
      resent: of.filter((r) => r.attempts.some((a) => a.resend)).length,
      attempts: of.reduce((n, r) => n + r.attempts.length, 0),
    };
  });
  const total = (k: keyof Omit<CommandCounts, 'api'>) => rows.reduce((n, r) => n + r[k], 0);
  return [
    ...rows,
    {
      api: 'all',
      sent: total('sent'),
      acknowledged: total('acknowledged'),
      succeeded: total('succeeded'),
      refused: total('refused'),
      unknown: total('unknown'),
      retried: total('retried'),
      resent: total('resent'),
      attempts: total('attempts'),
    },
  ];
}

export function countFaults(faults: readonly InjectedFault[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of faults) counts[f.type] = (counts[f.type] ?? 0) + 1;
  return counts;
}

const ms = (v: number | null) => (v === null ? 'not recovered' : `${(v / 1000).toFixed(2)} s`);

export function renderMarkdown(report: ChaosReport): string {
  const lines = [
    `# Chaos run, seed ${report.seed}: ${report.pass ? 'PASS' : 'FAIL'}`,
    '',
    `Started ${report.startedAt}, workload ${(report.durationMs / 1000).toFixed(0)} s. Rerun: \`npm run chaos -- --seed ${report.seed} --duration ${Math.round(report.durationMs / 1000)}\``,
    '',
    '## Faults',
    '',
    '| fault | count |',
    '| ----- | ----- |',
    ...Object.entries(report.faults).map(([type, n]) => `| ${type} | ${n} |`),
    '',
    '## Commands',
    '',
    '| api | sent | acknowledged | succeeded | refused | unknown | retried | resent | attempts |',
    '| --- | ---- | ------------ | --------- | ------- | ------- | ------- | ------ | -------- |',
    ...report.commands.map(
      (c) =>
        `| ${c.api} | ${c.sent} | ${c.acknowledged} | ${c.succeeded} | ${c.refused} | ${c.unknown} | ${c.retried} | ${c.resent} | ${c.attempts} |`,
    ),
    '',
    '## Availability gap per fault type',
    '',
    'From the fault to the first answer, on each room touched after it, of an attempt started after it; a fault counts its worst room.',
    '',
    '| fault | count | median | max | target | within target |',
    '| ----- | ----- | ------ | --- | ------ | ------------- |',
    ...report.gaps.map(
      (g) =>
        `| ${g.type} | ${g.count} | ${ms(g.medianMs)} | ${ms(g.maxMs)} | ${ms(g.targetMs)} | ${g.notRecovered === 0 && g.maxMs !== null && g.maxMs <= g.targetMs ? 'yes' : 'no'} |`,
    ),
    '',
    '| at (s) | fault | gap | worst room | rooms |',
    '| ------ | ----- | --- | ---------- | ----- |',
    ...report.faultGaps.map(
      (g) =>
        `| ${((g.atMs - Date.parse(report.startedAt)) / 1000).toFixed(1)} | ${g.detail} | ${ms(g.gapMs)} | ${g.worstRoom ?? '-'} | ${g.rooms} |`,
    ),
    '',
    '## Invariants',
    '',
    ...report.invariants.flatMap((r) => [
      `- **${r.pass ? 'PASS' : 'FAIL'}** ${r.name} (${r.checked} checked)`,
      ...r.counterexamples.map((c) => `  - ${c}`),
    ]),
    ...(report.errors.length
      ? ['', '## Workload errors', '', ...report.errors.map((e) => `- ${e}`)]
      : []),
    '',
  ];
  return lines.join('\n');
}

export async function writeReport(report: ChaosReport, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const markdown = renderMarkdown(report);
  await writeFile(path.join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(path.join(dir, 'report.md'), markdown);
  return markdown;
}
