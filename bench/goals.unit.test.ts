import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goalsFor, parseFigures } from './goals.js';

describe('bench figures and goals', () => {
  it('reads only whole `name=value` lines with a number', () => {
    const figures = parseFigures([
      'ratio_forwarded=0.912',
      '  failover_kill9_gap_max_ms=2710  ',
      'median direct 5000 cmd/s ratio=1.2 in a sentence',
      'Ratio_upper=1',
      'fanout_p99_ms=abc',
      'fanout_p99_ms=55.5',
      'bad=1.2.3',
      'meeting_chat_p99_ms=NaN',
    ]);
    assert.deepEqual(figures, {
      ratio_forwarded: 0.912,
      failover_kill9_gap_max_ms: 2710,
      fanout_p99_ms: 55.5,
      meeting_chat_p99_ms: NaN,
    });
  });

  it('marks a goal met, missed, or not measured (never met by default)', () => {
    const byKey = new Map(
      goalsFor({
        ratio_forwarded: 0.9,
        ratio_many_rooms: 0.94,
        failover_drain_gap_max_ms: 501,
        failover_kill9_gap_max_ms: 3000,
        meeting_chat_p99_ms: NaN,
      }).map((g) => [g.key, g]),
    );
    assert.equal(byKey.get('ratio_forwarded')?.met, 'yes');
    assert.equal(byKey.get('ratio_many_rooms')?.met, 'no');
    assert.equal(byKey.get('failover_drain_gap_max_ms')?.met, 'no');
    assert.equal(byKey.get('failover_kill9_gap_max_ms')?.met, 'yes');
    assert.equal(byKey.get('meeting_chat_p99_ms')?.met, '–');
    assert.equal(byKey.get('meeting_chat_p99_ms')?.value, null);
    assert.equal(byKey.get('ratio_hot_room')?.met, '–');
  });
});
