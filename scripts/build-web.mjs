#!/usr/bin/env node
/**
 * Builds the web client (web/ → web/dist, served by every node at `/`) with Vite.
 *   node scripts/build-web.mjs            `npm run build`: type-checks (vue-tsc), builds, fails loudly
 *   node scripts/build-web.mjs --install  `npm ci`'s postinstall: builds; when it cannot (no
 *                                         devDependencies, a failed build) it says why and what to
 *                                         run, and the install still succeeds (the node then
 *                                         answers `/` with that advice)
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const project = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const install = process.argv.includes('--install');
const say = (line) => process.stderr.write(`[web] ${line}\n`);
const bin = (pkg, file) => path.join(project, 'node_modules', pkg, 'bin', file);

function run(label, script, args) {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: project, stdio: 'inherit' });
  if (result.status === 0) return true;
  say(`${label} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`);
  return false;
}

function main() {
  const vite = bin('vite', 'vite.js');
  if (!existsSync(vite)) {
    say('the web client is not built: Vite is not installed (devDependencies omitted?).');
    say('What to run: `npm ci` (with devDependencies), then `npm run build`.');
    return install ? 0 : 1;
  }
  if (!install) {
    const vueTsc = bin('vue-tsc', 'vue-tsc.js');
    if (!run('type check of web/ (vue-tsc)', vueTsc, ['-p', 'web/tsconfig.json'])) return 1;
  }
  if (!run('vite build', vite, ['build', 'web', '--logLevel', install ? 'warn' : 'info'])) {
    say(
      'the web client is not rebuilt: the node serves the previous build if any, else `/` says so.',
    );
    say('What to run: `npm run build` (its output shows the error).');
    return install ? 0 : 1;
  }
  say(`web client built: ${path.join('web', 'dist')}`);
  return 0;
}

process.exitCode = main();
