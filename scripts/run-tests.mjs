#!/usr/bin/env node
// `npm test`: collects the test files and runs them in ONE `node --test` child process.
// Node 20's `--test` does not expand globs, hence the explicit file list.
//
// Usage: node scripts/run-tests.mjs [unit|int|e2e ...] [path ...] [--node-test-option ...]
//   no arguments        every *.unit|int|e2e.test.ts under src/, bench/ and packages/
//   unit / int / e2e    only those tiers (combinable: `unit int`)
//   path                just that file, or the tests under that directory (tier filters apply
//                       to directories, never to files named explicitly)
//   --list              print the files in the order they would run, and run nothing
//   --option[=value]    passed to `node --test`, e.g. --test-name-pattern=lease
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TIERS = ['unit', 'int', 'e2e'];
const SEARCH_ROOTS = ['src', 'bench', 'packages'];
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist']);
const TEST_FILE = /\.(unit|int|e2e)\.test\.ts$/;

/** Recursively lists test files under `dir` (absolute) whose tier is in `tiers`. */
function collect(dir, tiers) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) found.push(...collect(full, tiers));
    } else if (entry.isFile()) {
      const match = TEST_FILE.exec(entry.name);
      if (match && tiers.has(match[1])) found.push(full);
    }
  }
  return found;
}

function fail(message, code = 1) {
  console.error(`run-tests: ${message}`);
  process.exit(code);
}

const selectedTiers = new Set();
const paths = [];
const nodeOptions = [];
let listOnly = false;
for (const arg of process.argv.slice(2)) {
  if (TIERS.includes(arg)) selectedTiers.add(arg);
  else if (arg === '--list') listOnly = true;
  else if (arg.startsWith('-')) nodeOptions.push(arg);
  else if (existsSync(path.resolve(arg))) paths.push(path.resolve(arg));
  else {
    fail(`"${arg}" is neither a tier (${TIERS.join(', ')}) nor an existing file or directory`, 2);
  }
}
const tiers = selectedTiers.size > 0 ? selectedTiers : new Set(TIERS);

const files = new Set();
if (paths.length === 0) {
  for (const dir of SEARCH_ROOTS) {
    const abs = path.join(root, dir);
    if (existsSync(abs)) for (const file of collect(abs, tiers)) files.add(file);
  }
} else {
  for (const p of paths) {
    if (statSync(p).isDirectory()) for (const file of collect(p, tiers)) files.add(file);
    else files.add(p);
  }
}

if (files.size === 0) {
  const where = paths.length > 0 ? paths.map((p) => path.relative(root, p) || '.') : SEARCH_ROOTS;
  fail(
    `no test files found (tiers: ${[...tiers].join(', ')}; looked in: ${where.join(', ')}; ` +
      'expected names like foo.unit.test.ts, foo.int.test.ts, foo.e2e.test.ts)',
  );
}

/**
 * The run's order. The image test starts first: building the image loads both cores for a
 * long while on a cold cache, and started late it alone would make the run's tail. The
 * browser tests are spread evenly through the rest, so that two rarely run at once: two
 * together starve each other's media of CPU, which WebRTC reads as congestion (a sender
 * drops its top layer, a stalled stream waits for a key frame).
 */
function runOrder(sorted) {
  const marked = (marker) => sorted.filter((f) => readFileSync(f, 'utf8').includes(marker));
  const image = marked('dockerSkipReason()');
  const browser = marked('browserSkipReason()').filter((f) => !image.includes(f));
  const rest = sorted.filter((f) => !image.includes(f) && !browser.includes(f));
  const order = [...image];
  const gap = rest.length / Math.max(1, browser.length);
  let next = 0;
  browser.forEach((file, i) => {
    for (const until = Math.round((i + 0.5) * gap); next < until; next++) order.push(rest[next]);
    order.push(file);
  });
  return [...order, ...rest.slice(next)];
}

const fileArgs = runOrder([...files].sort()).map((f) => path.relative(root, f) || f);
const args = [
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=2',
  '--test-reporter=spec',
  ...nodeOptions,
  ...fileArgs,
];
if (listOnly) {
  console.log(fileArgs.join('\n'));
  process.exit(0);
}
console.log(`run-tests: ${fileArgs.length} file(s), tiers: ${[...tiers].join(', ')}`);

// The browser tests serve web/dist. Built once here, before any test runs: a build inside a
// test file empties web/dist while another file's pages may be loading it.
const env = { ...process.env, NODE_ENV: 'test' };
if (fileArgs.some((f) => f.endsWith('.e2e.test.ts'))) {
  const built = spawnSync(process.execPath, ['scripts/build-web.mjs', '--install'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (built.status !== 0 || !/web client built/.test(built.stderr)) {
    fail(`the web client did not build:\n${built.stderr}`);
  }
  env.ROOMS_TEST_WEB_BUILT = '1';
}

const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env });

// Forward termination so a cancelled CI job does not leave the test run behind.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => child.kill(signal));
}

child.on('error', (error) => fail(`could not start node: ${error.message}`));
child.on('exit', (code, signal) => {
  if (signal) fail(`test process was killed by ${signal}`);
  process.exit(code ?? 1);
});
