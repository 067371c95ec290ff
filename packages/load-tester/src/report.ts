/**
 * The load run's report: a table a person reads, then one `load_result …` line a CI reads
 * (`key=value` pairs, `ok=true|false` last).
 */
import type { LoadOptions } from './options.js';
import { quantile, type Recorder } from './recorder.js';

export interface LoadSummary {
  readonly joins: number;
  readonly joinP50Ms: number;
  readonly joinP99Ms: number;
  readonly commands: number;
  readonly commandP99Ms: number;
  readonly errors: number;
  readonly errorRate: number;
  readonly framesOwed: number;
  readonly framesGot: number;
  readonly delivery: number;
  /** `--media` only (else null): RTP packets owed, got, their share, first audio p50/p99. */
  readonly media: {
    readonly owed: number;
    readonly got: number;
    readonly delivery: number;
    readonly firstAudioP50Ms: number;
    readonly firstAudioP99Ms: number;
  } | null;
  readonly ok: boolean;
}

export function summarize(options: LoadOptions, recorder: Recorder): LoadSummary {
  const operations = recorder.operations();
  const joins = operations.get('join') ?? [];
  const commands = [...operations]
    .filter(([name]) => name !== 'join' && name !== 'close')
    .flatMap(([, list]) => list)
    .sort((a, b) => a - b);
  const errors = recorder.errorCount;
  const attempted = joins.length + commands.length + errors;
  const errorRate = attempted === 0 ? 0 : errors / attempted;
  const delivery = recorder.framesOwed === 0 ? 1 : recorder.framesGot / recorder.framesOwed;
  const media = options.media ? mediaSummary(recorder) : null;
  return {
    joins: joins.length,
    joinP50Ms: quantile(joins, 0.5),
    joinP99Ms: quantile(joins, 0.99),
    commands: commands.length,
    commandP99Ms: quantile(commands, 0.99),
    errors,
    errorRate,
    framesOwed: recorder.framesOwed,
    framesGot: recorder.framesGot,
    delivery,
    media,
    ok:
      errorRate <= options.maxErrorRate &&
      delivery >= options.minDelivery &&
      (media === null || media.delivery >= options.minMediaDelivery),
  };
}

/** Nothing owed counts as nothing delivered: a media run where no audio flowed fails. */
function mediaSummary(recorder: Recorder): NonNullable<LoadSummary['media']> {
  const { packetsOwed: owed, packetsGot: got } = recorder;
  const firstAudio = [...recorder.firstAudio].sort((a, b) => a - b);
  return {
    owed,
    got,
    delivery: owed === 0 ? 0 : got / owed,
    firstAudioP50Ms: quantile(firstAudio, 0.5),
    firstAudioP99Ms: quantile(firstAudio, 0.99),
  };
}

const ms = (value: number) => value.toFixed(1);

export function reportLines(
  options: LoadOptions,
  recorder: Recorder,
  summary: LoadSummary,
): string[] {
  const lines = [
    `${options.scenario}: ${options.rooms} rooms × ${options.listeners} listeners, ` +
      `${options.durationS} s at ${options.chatRate} chat/s, ${options.seatRate} ` +
      `${options.scenario === 'voice' ? 'seat cycles' : 'hand raises'}/s` +
      (options.scenario === 'voice' ? `, ${options.giftRate} gifts/s` : '') +
      ' per room',
    '',
    'operation       count     p50 ms     p99 ms',
  ];
  for (const [name, list] of recorder.operations()) {
    lines.push(
      `${name.padEnd(14)}${String(list.length).padStart(7)}${ms(quantile(list, 0.5)).padStart(11)}` +
        `${ms(quantile(list, 0.99)).padStart(11)}`,
    );
  }
  lines.push('', `frames: ${summary.framesGot} of ${summary.framesOwed} owed to the members`);
  const { media } = summary;
  if (media) {
    lines.push(
      `audio: ${media.got} of ${media.owed} RTP packets owed to the listeners; first audio ` +
        `after the announcement p50 ${ms(media.firstAudioP50Ms)} ms, p99 ${ms(media.firstAudioP99Ms)} ms`,
    );
  }
  if (recorder.errors.size > 0) {
    lines.push('errors by operation and reason:');
    for (const [key, count] of recorder.errors) lines.push(`  ${key} ${count}`);
  }
  const pairs: [string, string | number | boolean][] = [
    ['scenario', options.scenario],
    ['rooms', options.rooms],
    ['listeners', options.listeners],
    ['joins', summary.joins],
    ['join_p50_ms', ms(summary.joinP50Ms)],
    ['join_p99_ms', ms(summary.joinP99Ms)],
    ['commands', summary.commands],
    ['command_p99_ms', ms(summary.commandP99Ms)],
    ['frames_owed', summary.framesOwed],
    ['frames_delivered', summary.framesGot],
    ['delivery', summary.delivery.toFixed(4)],
    ...(media
      ? ([
          ['rtp_owed', media.owed],
          ['rtp_delivered', media.got],
          ['rtp_delivery', media.delivery.toFixed(4)],
          ['first_audio_p50_ms', ms(media.firstAudioP50Ms)],
          ['first_audio_p99_ms', ms(media.firstAudioP99Ms)],
        ] satisfies [string, number | string][])
      : []),
    ['errors', summary.errors],
    ['error_rate', summary.errorRate.toFixed(4)],
    ['ok', summary.ok],
  ];
  lines.push('', `load_result ${pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  return lines;
}
