/**
 * The load report's verdict on audio (`--media`): the share of owed RTP packets that arrived
 * against `--min-media-delivery`, and a run that owed nothing (no audio flowed) failing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLoadOptions } from '../src/options.js';
import { Recorder } from '../src/recorder.js';
import { reportLines, summarize } from '../src/report.js';

const options = (...extra: string[]) =>
  parseLoadOptions(['--url', 'http://127.0.0.1:8080', ...extra]);

function recorder(owed: number, got: number, firstAudio: number[] = []): Recorder {
  const r = new Recorder();
  r.packetsOwed = owed;
  r.packetsGot = got;
  r.firstAudio.push(...firstAudio);
  return r;
}

void describe('the load report: audio', () => {
  void it('passes at the share asked, fails below it', () => {
    assert.equal(summarize(options('--media'), recorder(1000, 990)).ok, true);
    assert.equal(summarize(options('--media'), recorder(1000, 989)).ok, false);
    const strict = options('--media', '--min-media-delivery', '1');
    assert.equal(summarize(strict, recorder(1000, 999)).ok, false);
    assert.equal(summarize(strict, recorder(1000, 1000)).ok, true);
  });

  void it('fails a run where no audio was owed: nothing flowed is no pass', () => {
    const summary = summarize(options('--media'), recorder(0, 0));
    assert.deepEqual([summary.media?.delivery, summary.ok], [0, false]);
  });

  void it('leaves audio out of a run without --media', () => {
    const summary = summarize(options(), recorder(0, 0));
    assert.deepEqual([summary.media, summary.ok], [null, true]);
    assert.doesNotMatch(reportLines(options(), recorder(0, 0), summary).at(-1)!, /rtp_/);
  });

  void it('reports first audio by nearest rank, in the line a CI reads', () => {
    const r = recorder(200, 200, [30, 10, 20, 40]);
    const summary = summarize(options('--media'), r);
    assert.deepEqual([summary.media?.firstAudioP50Ms, summary.media?.firstAudioP99Ms], [20, 40]);
    assert.match(
      reportLines(options('--media'), r, summary).at(-1)!,
      / rtp_owed=200 rtp_delivered=200 rtp_delivery=1\.0000 first_audio_p50_ms=20\.0 first_audio_p99_ms=40\.0 .* ok=true$/,
    );
  });

  void it('refuses bad media options as usage errors', () => {
    assert.throws(() => options('--talk-ms', '5'), /--talk-ms: an integer from 20/);
    assert.throws(() => options('--min-media-delivery', '1.5'), /--min-media-delivery: 0 to 1/);
    assert.throws(() => options('--media=yes'), /--media/);
  });
});
