/**
 * The install step that gives `npm ci` a mediasoup worker (scripts/install-media.mjs): it
 * fetches mediasoup's prebuilt binary where it can be reached, checks it runs on this host
 * and caches it; an unreachable or broken download is refused and cached nowhere. The
 * "release server" here is a loopback HTTP server serving the worker this machine has.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { arch, platform, release, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import { installedMediasoupVersion, resolveWorkerBin } from './worker-bin.js';

const project = path.resolve(import.meta.dirname, '../..');
const worker = resolveWorkerBin(null, process.env);
const skip = worker ? false : 'no mediasoup-worker on this machine (npm run media:worker)';

function runInstall(env: Record<string, string>): Promise<{ code: number | null; log: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/install-media.mjs'], {
      cwd: project,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('exit', (code) => resolve({ code, log }));
  });
}

void describe('npm ci installs the mediasoup worker by itself', { skip }, () => {
  let dir: string;
  let server: Server;
  let base: string;
  const files = new Map<string, Buffer>();
  const version = installedMediasoupVersion()!;
  const kernel = platform() === 'linux' ? `-kernel${release().split('.')[0]}` : '';
  const tarName = `mediasoup-worker-${version}-${platform()}-${arch()}${kernel}.tgz`;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-install-media-'));
    const stage = path.join(dir, 'stage');
    execFileSync('mkdir', ['-p', stage]);
    execFileSync('cp', [worker!.path, path.join(stage, 'mediasoup-worker')]);
    execFileSync('tar', ['-czf', path.join(dir, 'good.tgz'), '-C', stage, 'mediasoup-worker']);
    await writeFile(path.join(stage, 'mediasoup-worker'), '#!/bin/sh\nexit 3\n', { mode: 0o755 });
    execFileSync('tar', ['-czf', path.join(dir, 'bad.tgz'), '-C', stage, 'mediasoup-worker']);
    files.set(`/good/${version}/${tarName}`, await readFile(path.join(dir, 'good.tgz')));
    files.set(`/bad/${version}/${tarName}`, await readFile(path.join(dir, 'bad.tgz')));
    server = createServer((req, res) => {
      const body = files.get(req.url ?? '');
      res.writeHead(body ? 200 : 404).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('fetches the prebuilt worker, checks that it runs here and caches it', async () => {
    const cache = path.join(dir, 'cache-good');
    const { code, log } = await runInstall({
      ROOMS_MEDIA_INSTALL: 'prebuilt',
      MEDIASOUP_WORKER_CACHE: cache,
      MEDIASOUP_WORKER_PREBUILT_DOWNLOAD_BASE_URL: `${base}/good`,
    });
    assert.equal(code, 0, log);
    const cached = path.join(cache, version, 'mediasoup-worker');
    assert.ok(existsSync(cached), log);
    assert.ok(existsSync(`${cached}.prebuilt-by-mediasoup`));
    // The media server finds it in the cache by itself.
    const found = resolveWorkerBin(null, { ...process.env, MEDIASOUP_WORKER_CACHE: cache });
    assert.ok(found);
  });

  it('refuses a worker that does not run on this host, and one it cannot reach', async () => {
    for (const [name, url] of [
      ['bad', `${base}/bad`],
      ['missing', `${base}/nowhere`],
      ['closed', 'http://127.0.0.1:9'],
    ] as const) {
      const cache = path.join(dir, `cache-${name}`);
      const { code, log } = await runInstall({
        ROOMS_MEDIA_INSTALL: 'prebuilt',
        MEDIASOUP_WORKER_CACHE: cache,
        MEDIASOUP_WORKER_PREBUILT_DOWNLOAD_BASE_URL: url,
      });
      assert.equal(code, 1, `${name}: ${log}`);
      assert.equal(existsSync(path.join(cache, version, 'mediasoup-worker')), false, name);
    }
  });

  it('reuses a worker that is already there, and skips on request', async () => {
    const reused = await runInstall({});
    assert.equal(reused.code, 0);
    assert.match(reused.log, new RegExp(`mediasoup-worker ${version}: `));
    const skipped = await runInstall({ ROOMS_MEDIA_INSTALL: 'skip' });
    assert.equal(skipped.code, 0);
    assert.match(skipped.log, /skip/);
  });
});
