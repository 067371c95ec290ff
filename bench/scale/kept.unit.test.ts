import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScaleDimension } from './dimension.js';
import {
  figuresBySize,
  keptDimension,
  measuredIn,
  rerunOnly,
  scaleSectionFigures,
} from './kept.js';

const dimension = (name: string): ScaleDimension => ({
  name,
  what: `${name} measured`,
  unit: 'things',
  sizes: [1, 2],
  plots: [{ figure: 'ms', label: 'ms' }],
  run: () => Promise.reject(new Error(`${name} ran`)),
});

const figures = {
  scale_rooms_1000_rss_mib: 80,
  scale_rooms_100_rss_mib: 60,
  scale_rooms_100_failed: 1,
  scale_logs_1000_log_after: 54,
  other_figure: 3,
};
const report = [
  '<!-- bench:cell -->',
  '<!-- figures {"scale_rooms_1_x":1} -->',
  '<!-- /bench:cell -->',
  '<!-- bench:scale -->',
  '### scale',
  '`npm run bench:scale`: ok, 60 s, run 2026-12-04 10:00 UTC on 2 × CPU, 8 GiB, load average 1 / 1 / 1 at the start.',
  `<!-- figures ${JSON.stringify(figures)} -->`,
  '--- rooms: rooms touched',
  '<!-- /bench:scale -->',
].join('\n');

describe('kept scale figures', () => {
  it("reads the scale section's figures only", () => {
    assert.deepEqual(scaleSectionFigures(report), figures);
    assert.deepEqual(scaleSectionFigures('# no report'), {});
  });

  it('tells where kept figures were measured: the earlier stand-in, else the section run', () => {
    assert.equal(measuredIn(report, 'rooms'), '2026-12-04 10:00 UTC on 2 × CPU, 8 GiB');
    assert.equal(measuredIn('', 'rooms'), null);
    // A section written by a rerun: its header is the rerun's, not the kept ones'.
    const rerun = report.replace(
      '--- rooms: rooms touched',
      '--- fanout: one room (not rerun: the figures of the run 2026-12-01 09:00 UTC on 4 × CPU)',
    );
    assert.equal(measuredIn(rerun, 'fanout'), '2026-12-01 09:00 UTC on 4 × CPU');
    assert.equal(measuredIn(rerun, 'rooms'), null, 'its line fell off the tail: unknown');
  });

  it('groups one dimension by size', () => {
    assert.deepEqual(
      [...figuresBySize(figures, 'rooms')],
      [
        [1000, { rss_mib: 80 }],
        [100, { rss_mib: 60, failed: 1 }],
      ],
    );
  });

  it('stands in for a dimension with its kept figures, drawing no plot', async () => {
    const kept = keptDimension(dimension('rooms'), figures)!;
    assert.deepEqual(kept.sizes, [100, 1000]);
    assert.deepEqual(kept.plots, []);
    assert.deepEqual(await kept.run(1000), { rss_mib: 80 });
    assert.equal(keptDimension(dimension('fanout'), figures), null);
  });

  it('reruns the named dimensions and keeps the others that have figures', async () => {
    const all = [dimension('fanout'), dimension('rooms'), dimension('logs')];
    assert.equal(rerunOnly(all, {}, () => report).length, 3);
    const some = rerunOnly(all, { BENCH_SCALE_RERUN: 'logs' }, () => report);
    assert.deepEqual(
      some.map((d) => d.name),
      ['rooms', 'logs'],
    );
    assert.equal(some[1], all[2], 'the rerun one itself');
    assert.deepEqual(await some[0]!.run(100), { rss_mib: 60, failed: 1 });
    assert.match(
      some[0]!.what,
      /\(not rerun: the figures of the run 2026-12-04 10:00 UTC on 2 × CPU, 8 GiB\)$/,
    );
    assert.deepEqual(
      measuredIn(
        `<!-- bench:scale -->\n--- rooms: ${some[0]!.what}\n<!-- /bench:scale -->`,
        'rooms',
      ),
      '2026-12-04 10:00 UTC on 2 × CPU, 8 GiB',
    );
    const none = rerunOnly(all, { BENCH_SCALE_RERUN: 'logs' }, () => {
      throw new Error('no report');
    });
    assert.deepEqual(
      none.map((d) => d.name),
      ['logs'],
    );
    assert.throws(() => rerunOnly(all, { BENCH_SCALE_RERUN: 'nope' }, () => report), /nope/);
  });
});
