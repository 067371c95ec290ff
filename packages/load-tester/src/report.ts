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
    ok: errorRate <= options.maxErrorRate && delivery >= options.minDelivery,
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
    ['errors', summary.errors],
    ['error_rate', summary.errorRate.toFixed(4)],
    ['ok', summary.ok],
  ];
  lines.push('', `load_result ${pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  return lines;
}
