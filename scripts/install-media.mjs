#!/usr/bin/env node
/**
 * `npm ci`'s postinstall: makes sure meetings have audio and video after the install, with
 * no further command. mediasoup's own postinstall is denied (package.json allowScripts): it
 * would fetch meson and its sources from outside the npm registry and fail offline. Here:
 *   1. a worker already there (cache of the offline build, node_modules, MEDIASOUP_WORKER_BIN)
 *      is reused;
 *   2. else mediasoup's prebuilt binary is downloaded where it can be reached (15 s at most),
 *      checked on this host and cached per machine;
 *   3. else the offline build against the system's libraries (scripts/build-mediasoup-
 *      worker.sh: Debian packages, 4-5 minutes once, cached), with its progress shown;
 *   4. where none works it says why and what to run, and the install still succeeds: the
 *      node then starts without media and /healthz says so.
 * ROOMS_MEDIA_INSTALL: `skip` does none of it (e.g. a gateway-only deployment); `prebuilt`
 * fetches the prebuilt binary even when a worker exists and never builds (exit 1 when it
 * cannot be had).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { arch, homedir, platform, release, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const project = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const buildScript = path.join(project, 'scripts', 'build-mediasoup-worker.sh');
const say = (line) => process.stderr.write(`[media] ${line}\n`);

function mediasoupVersion() {
  try {
    const file = path.join(project, 'node_modules', 'mediasoup', 'package.json');
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    return typeof pkg.version === 'string' ? pkg.version : null;
  } catch {
    return null;
  }
}

function cacheBin(version) {
  const root =
    process.env.MEDIASOUP_WORKER_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'mediasoup-worker');
  return path.join(root, version, 'mediasoup-worker');
}

/** mediasoup's own check: without MEDIASOUP_VERSION the worker exits with 41 on a good host. */
function runsHere(bin) {
  return existsSync(bin) && spawnSync(bin, [], { env: {}, stdio: 'ignore' }).status === 41;
}

function existingWorker(version) {
  const candidates = [
    process.env.MEDIASOUP_WORKER_BIN,
    path.join(project, 'node_modules/mediasoup/worker/out/Release/mediasoup-worker'),
    cacheBin(version),
  ].filter(Boolean);
  return candidates.find(runsHere) ?? null;
}

async function downloadPrebuilt(version) {
  const base =
    process.env.MEDIASOUP_WORKER_PREBUILT_DOWNLOAD_BASE_URL ||
    'https://github.com/versatica/mediasoup/releases/download';
  const kernel = platform() === 'linux' ? `-kernel${release().split('.')[0]}` : '';
  const url = `${base}/${version}/mediasoup-worker-${version}-${platform()}-${arch()}${kernel}.tgz`;
  say(`trying mediasoup's prebuilt worker: ${url}`);
  let body;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
    if (!res.ok) return (say(`prebuilt worker not available (HTTP ${res.status})`), null);
    body = Buffer.from(await res.arrayBuffer());
  } catch (error) {
    return (say(`prebuilt worker not reachable (${error.cause?.code ?? error.name})`), null);
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'mediasoup-prebuilt-'));
  try {
    await writeFile(path.join(dir, 'worker.tgz'), body);
    const untar = spawnSync('tar', ['-xzf', 'worker.tgz'], { cwd: dir, stdio: 'inherit' });
    const bin = path.join(dir, 'mediasoup-worker');
    if (untar.status !== 0 || !existsSync(bin)) return (say('prebuilt archive unreadable'), null);
    chmodSync(bin, 0o755);
    if (!runsHere(bin)) return (say('prebuilt worker does not run on this host'), null);
    const cached = cacheBin(version);
    mkdirSync(path.dirname(cached), { recursive: true });
    copyFileSync(bin, cached);
    // The offline build script reuses a cached binary only when it carries a marker.
    writeFileSync(`${cached}.prebuilt-by-mediasoup`, `${url}\n`);
    return cached;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function buildOffline() {
  say('building the worker offline against the system libraries (4-5 minutes, once per machine)');
  const result = spawnSync('bash', [buildScript], { cwd: project, stdio: 'inherit' });
  if (result.status !== 0) return null;
  const printed = spawnSync('bash', [buildScript, '--print-bin'], { encoding: 'utf8' });
  return printed.status === 0 ? printed.stdout.trim() : null;
}

async function main() {
  const mode = process.env.ROOMS_MEDIA_INSTALL ?? 'auto';
  if (mode === 'skip') return say('ROOMS_MEDIA_INSTALL=skip: no worker installed');
  const version = mediasoupVersion();
  if (!version) return say('mediasoup is not installed: nothing to do');
  if (mode === 'prebuilt') {
    const bin = await downloadPrebuilt(version);
    if (!bin) process.exitCode = 1;
    return say(bin ? `mediasoup-worker ${version}: ${bin}` : 'no prebuilt worker');
  }
  const found = existingWorker(version);
  if (found) return say(`mediasoup-worker ${version}: ${found}`);
  const bin = (await downloadPrebuilt(version)) ?? buildOffline();
  if (bin && runsHere(bin)) return say(`mediasoup-worker ${version}: ${bin}`);
  say('no mediasoup-worker could be installed: meetings will have no audio or video.');
  say('Why: the prebuilt binary could not be fetched and the offline build failed (see above:');
  say('it needs Debian/Ubuntu packages, g++ and root or sudo for apt-get).');
  say('What to run: `npm run media:worker` after fixing that, or set MEDIASOUP_WORKER_BIN');
  say(`to a worker binary of mediasoup ${version}. The node starts without media meanwhile.`);
}

main().catch((error) => say(`media install step failed: ${error?.message ?? error}`));
