/**
 * `npm run load -- --url https://… --scenario voice|meeting --rooms N --listeners M
 * --duration S …`: loads a deployment through its public API with the project's client SDK
 * (packages/client), signalling only, and prints a report with a `load_result` line. Exit
 * code 0: within --max-error-rate and --min-delivery; 1: not; 2: a usage error or a run that
 * could not start (the target unreachable, users not made). docs/load-testing.md.
 */
import { runLoad } from './run.js';
import { parseLoadOptions, USAGE, UsageError } from './options.js';

try {
  const options = parseLoadOptions(process.argv.slice(2));
  const { lines, summary } = await runLoad(options, (line) => console.error(line));
  console.log(lines.join('\n'));
  process.exitCode = summary.ok ? 0 : 1;
} catch (error) {
  console.error(
    error instanceof UsageError
      ? `${error.message}\n\n${USAGE}`
      : `load: ${(error as Error).message}`,
  );
  process.exitCode = 2;
}
