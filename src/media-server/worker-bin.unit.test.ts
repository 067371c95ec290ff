/** Where the media server looks for the mediasoup-worker binary. */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cachedWorkerBinPath, resolveWorkerBin } from './worker-bin.js';

void describe('resolveWorkerBin', () => {
  let dir: string;
  let bin: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'worker-bin-'));
    bin = path.join(dir, 'mediasoup-worker');
    await writeFile(bin, '#!/bin/sh\n');
    await chmod(bin, 0o755);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  void it('takes a configured path only if it is executable, and looks no further', async () => {
    assert.deepEqual(resolveWorkerBin(bin, {}), { path: bin, source: 'config' });
    assert.equal(resolveWorkerBin(path.join(dir, 'missing'), { MEDIASOUP_WORKER_BIN: bin }), null);
    const plain = path.join(dir, 'not-executable');
    await writeFile(plain, '');
    assert.equal(resolveWorkerBin(plain, {}), null);
  });

  void it('then MEDIASOUP_WORKER_BIN, mediasoup’s own variable', () => {
    assert.deepEqual(resolveWorkerBin(null, { MEDIASOUP_WORKER_BIN: bin }), {
      path: bin,
      source: 'MEDIASOUP_WORKER_BIN',
    });
    assert.equal(resolveWorkerBin(null, { MEDIASOUP_WORKER_BIN: path.join(dir, 'nope') }), null);
  });

  void it('puts the offline build cache where the build script does', () => {
    assert.equal(
      cachedWorkerBinPath('3.19.3', { HOME: '/home/u' }),
      '/home/u/.cache/mediasoup-worker/3.19.3/mediasoup-worker',
    );
    assert.equal(
      cachedWorkerBinPath('3.19.3', { HOME: '/home/u', XDG_CACHE_HOME: '/c' }),
      '/c/mediasoup-worker/3.19.3/mediasoup-worker',
    );
    assert.equal(
      cachedWorkerBinPath('3.19.3', { MEDIASOUP_WORKER_CACHE: '/w', XDG_CACHE_HOME: '/c' }),
      '/w/3.19.3/mediasoup-worker',
    );
  });
});
