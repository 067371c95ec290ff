import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { figureKey, parseFigureKey, sizesOf, type ScaleDimension } from './dimension.js';
import { linePlot, shortNumber } from './plot.js';
import { scaleTables } from './report.js';

const dimension: ScaleDimension = {
  name: 'rooms',
  what: 'rooms touched',
  unit: 'rooms',
  sizes: [1000, 10000],
  plots: [],
  run: () => Promise.resolve({}),
};

describe('scale figures', () => {
  it('round-trips a figure key and refuses other keys', () => {
    const key = figureKey('fanout', 2000, 'frames_per_s');
    assert.equal(key, 'scale_fanout_2000_frames_per_s');
    assert.deepEqual(parseFigureKey(key), {
      dimension: 'fanout',
      size: 2000,
      figure: 'frames_per_s',
    });
    assert.equal(parseFigureKey('ratio_forwarded'), null);
    assert.equal(parseFigureKey('scale_fanout_x_p99_ms'), null);
  });

  it('takes sizes from the environment, positive integers only', () => {
    assert.deepEqual(sizesOf(dimension, {}), [1000, 10000]);
    assert.deepEqual(sizesOf(dimension, { BENCH_SCALE_ROOMS_SIZES: '10, 20' }), [10, 20]);
    assert.throws(() => sizesOf(dimension, { BENCH_SCALE_ROOMS_SIZES: '10,1.5' }));
    assert.throws(() => sizesOf(dimension, { BENCH_SCALE_ROOMS_SIZES: '0' }));
  });

  it('tabulates figures by dimension and size, sizes ascending', () => {
    const lines = scaleTables(
      {
        scale_rooms_10000_rss_mib: 120,
        scale_rooms_1000_rss_mib: 80,
        scale_rooms_1000_cold_p99_ms: 4.5,
        ratio_forwarded: 0.9,
      },
      (d) => (d === 'rooms' ? ['rooms-rss_mib.svg'] : []),
    );
    assert.deepEqual(lines.slice(0, 6), [
      '#### rooms',
      '',
      '| size | rss_mib | cold_p99_ms |',
      '|---|---|---|',
      '| 1000 | 80 | 4.5 |',
      '| 10000 | 120 | – |',
    ]);
    assert.ok(lines.includes('![rooms: rooms-rss_mib.svg](plots/rooms-rss_mib.svg)'));
  });
});

describe('line plot', () => {
  it('draws every finite point and a legend per series, log x over a wide span', () => {
    const svg = linePlot({
      title: 'rooms <rss>',
      xLabel: 'rooms',
      yLabel: 'MiB',
      series: [
        {
          label: 'ours',
          points: [
            { x: 1000, y: 80 },
            { x: 10000, y: 100 },
            { x: 100000, y: 120 },
          ],
        },
        {
          label: 'bare',
          points: [
            { x: 1000, y: NaN },
            { x: 100000, y: 60 },
          ],
        },
      ],
    });
    assert.ok(svg.startsWith('<svg'));
    assert.equal((svg.match(/<circle /g) ?? []).length, 4);
    assert.equal((svg.match(/<polyline /g) ?? []).length, 1); // one point alone draws no line
    assert.ok(svg.includes('rooms (log scale)'));
    assert.ok(svg.includes('rooms &lt;rss&gt;'));
    assert.ok(!svg.includes('NaN'));
  });

  it('writes sizes short', () => {
    assert.equal(shortNumber(100000), '100k');
    assert.equal(shortNumber(2500), '2.5k');
    assert.equal(shortNumber(0.25), '0.25');
    assert.equal(shortNumber(1500000), '1.5M');
  });
});
