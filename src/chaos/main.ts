/**
 * `npm run chaos -- [--seed N] [--duration S] [--out DIR]`: one chaos run (see docs/testing.md
 * "Chaos suite"). Prints the report, writes it to DIR (default test-results/chaos-<seed>) and
 * exits 1 when an invariant fails.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runChaos } from './run.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    duration: { type: 'string', default: '120' },
    out: { type: 'string' },
  },
});
const seed = Number(values.seed);
const durationS = Number(values.duration);
if (!Number.isInteger(seed) || seed < 0) throw new Error('--seed: a non-negative integer');
if (!Number.isFinite(durationS) || durationS < 30)
  throw new Error('--duration: at least 30 (seconds)');
const outDir = path.resolve(values.out ?? path.join('test-results', `chaos-${seed}`));

const outcome = await runChaos({ seed, durationMs: durationS * 1000, outDir });
process.stdout.write(`${outcome.markdown}\nchaos: report written to ${outDir}\n`);
process.exit(outcome.report.pass ? 0 : 1);
