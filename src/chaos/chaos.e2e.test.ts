/**
 * The short chaos run of `npm test`: a fixed seed, 45 s of workload on 3 node processes with
 * every process fault once (kill -9 + restart, SIGSTOP past the lease, FLUSHALL, Redis
 * restart, MariaDB restart) and every RTC fault; every invariant must hold. Then the
 * mutation check: each corruption of this run's own rows or histories turns its invariant
 * red, so the pass above was not vacuous.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { mediaSkipReason } from '../media-server/testing/harness.js';
import { privateMariadbSkipReason } from '../testing/private-mariadb.js';
import { runChecks } from './check/index.js';
import { PROCESS_FAULTS, RTC_FAULTS } from './faults.js';
import { MUTATIONS } from './mutations.js';
import { runChaos, type ChaosOutcome } from './run.js';

const SEED = 20_260_421;
const DURATION_MS = 45_000;
const redisSkip = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].some(existsSync)
  ? false
  : 'redis-server not found';
const skip = privateMariadbSkipReason() || redisSkip || mediaSkipReason();

describe('the chaos run (short, seeded)', { skip, timeout: 600_000 }, () => {
  let outcome: ChaosOutcome | undefined;

  it(`keeps every invariant under every fault (seed ${SEED})`, async () => {
    outcome = await runChaos({
      seed: SEED,
      durationMs: DURATION_MS,
      outDir: path.resolve('test-results', `chaos-${SEED}`),
      log: (line) => process.stdout.write(`# ${line}\n`),
    });
    const { report, markdown } = outcome;
    process.stdout.write(markdown.replace(/^/gm, '# '));
    for (const type of [...PROCESS_FAULTS, ...RTC_FAULTS]) {
      assert.ok((report.faults[type] ?? 0) >= 1, `no ${type} fault in the run`);
    }
    assert.deepEqual(report.errors, []);
    const failed = report.invariants.filter((r) => !r.pass);
    assert.deepEqual(failed, [], 'invariants failed (see the report above)');
    for (const r of report.invariants) assert.ok(r.checked > 0, `${r.name} checked nothing`);
  });

  for (const mutation of MUTATIONS) {
    it(`goes red on ${mutation.what}`, (t) => {
      if (!outcome) return t.skip('the run did not complete');
      const corrupted = mutation.apply(outcome.rows, outcome.observed);
      assert.ok(corrupted, `the run had nothing to corrupt as "${mutation.what}"`);
      const result = runChecks(corrupted.rows, corrupted.observed).find(
        (r) => r.name === mutation.invariant,
      );
      assert.ok(result, `no invariant named "${mutation.invariant}"`);
      assert.equal(result.pass, false, `still green: ${JSON.stringify(result)}`);
    });
  }
});
