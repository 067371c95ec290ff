/** One load run, callable from the CLI (./cli.ts) and from tests. */
import { meetingScenario } from './meeting.js';
import type { LoadOptions } from './options.js';
import { Recorder } from './recorder.js';
import { reportLines, summarize, type LoadSummary } from './report.js';
import { loadUsers } from './users.js';
import { voiceScenario } from './voice.js';

export async function runLoad(
  options: LoadOptions,
  progress: (line: string) => void = () => undefined,
): Promise<{ lines: string[]; summary: LoadSummary; recorder: Recorder }> {
  const needed = options.rooms * (options.listeners + 1);
  progress(`load: ${needed} users from ${options.tokenSource} on ${options.url}…`);
  const users = await loadUsers(
    { baseUrl: options.url, source: options.tokenSource, appCode: options.appCode },
    needed,
  ).catch((error: Error) => {
    throw new Error(`no users on ${options.url} (${options.tokenSource}): ${error.message}`);
  });
  const recorder = new Recorder();
  progress(`load: ${options.scenario}, joining and driving for ${options.durationS} s…`);
  const scenario = options.scenario === 'voice' ? voiceScenario : meetingScenario;
  await scenario(options, recorder, users);
  const summary = summarize(options, recorder);
  return { lines: reportLines(options, recorder, summary), summary, recorder };
}
