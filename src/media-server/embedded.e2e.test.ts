/**
 * `npm start` (src/main/server.ts) as a real process: it runs the media server in its own
 * process tree, and a machine without a worker binary still gets a working node plus one
 * clear warning.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../testing/backends.js';
import { mediaSkipReason, waitFor } from './testing/harness.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOKEN = 'embedded-test-token-0123';

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  httpPort: number;
  mediaPort: number;
}

async function startServer(dir: string, extra: Record<string, string>): Promise<Started> {
  const [httpPort, grpcPort, mediaPort] = [await freePort(), await freePort(), await freePort()];
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('ROOMS_') && k !== 'NODE_TEST_CONTEXT',
    ),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts'], {
    cwd: REPO_ROOT,
    env: {
      ...inherited,
      ROOMS_DB_URL: path.join(dir, `rooms-${httpPort}.sqlite`),
      ROOMS_HTTP_HOST: '127.0.0.1',
      ROOMS_HTTP_PORT: String(httpPort),
      ROOMS_GRPC_PORT: String(grpcPort),
      ROOMS_MEDIA_PORT: String(mediaPort),
      ROOMS_MEDIA_INTERNAL_TOKEN: TOKEN,
      ROOMS_MEDIA_WORKERS: '1',
      ROOMS_LOG_LEVEL: 'info',
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  void exited.then(() => process.off('exit', kill));
  return { child, output: () => output, exited, httpPort, mediaPort };
}

const up = async (url: string, init?: RequestInit) => {
  try {
    return await fetch(url, init);
  } catch {
    return undefined;
  }
};

void describe('npm start with the embedded media server', () => {
  let dir: string;
  const started: Started[] = [];
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-media-e2e-'));
  });
  after(async () => {
    for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  void it(
    'serves the media API beside the node and stops its workers on SIGTERM',
    { skip: mediaSkipReason() },
    async () => {
      const s = await startServer(dir, {});
      started.push(s);
      const health = await waitFor(
        async () =>
          (await up(`http://127.0.0.1:${s.mediaPort}/healthz`))?.json() as
            Promise<{ status: string }> | undefined,
        `media /healthz (output: ${s.output()})`,
        30_000,
      );
      assert.equal(health.status, 'ok');
      const info = await fetch(`http://127.0.0.1:${s.mediaPort}/internal/info`, {
        headers: { 'x-internal-token': TOKEN },
      });
      assert.equal(info.status, 200);
      const body = (await info.json()) as { data: { workers: { pid: number }[] } };
      const pids = body.data.workers.map((w) => w.pid);
      assert.equal(pids.length, 1);
      const wrong = await fetch(`http://127.0.0.1:${s.mediaPort}/internal/info`, {
        headers: { 'x-internal-token': 'wrong' },
      });
      assert.equal(wrong.status, 401);
      // The media server starts before the node's HTTP listens: wait for that too.
      const node = await waitFor(
        async () => {
          const res = await up(`http://127.0.0.1:${s.httpPort}/healthz`);
          return res?.status === 200 ? res : undefined;
        },
        `node /healthz (output: ${s.output()})`,
        30_000,
      );
      assert.deepEqual(((await node.json()) as { media: unknown }).media, {
        available: true,
        mode: 'embedded',
      });

      s.child.kill('SIGTERM');
      assert.equal(await s.exited, 0, s.output());
      for (const pid of pids) {
        assert.throws(() => process.kill(pid, 0), 'the worker process is gone');
      }
    },
  );

  void it('starts the node without media, with one warning, when the worker binary is missing', async () => {
    const s = await startServer(dir, { ROOMS_MEDIA_WORKER_BIN: path.join(dir, 'no-such-worker') });
    started.push(s);
    await waitFor(
      async () =>
        (await up(`http://127.0.0.1:${s.httpPort}/healthz`))?.status === 200 ? true : undefined,
      `node /healthz (output: ${s.output()})`,
      30_000,
    );
    const warnings = s
      .output()
      .split('\n')
      .filter((line) => line.includes('embedded media server not started'));
    assert.equal(warnings.length, 1, s.output());
    assert.match(warnings[0]!, /scripts\/build-mediasoup-worker\.sh/);
    assert.equal(await up(`http://127.0.0.1:${s.mediaPort}/healthz`), undefined, 'no media API');
    const node = (await (await fetch(`http://127.0.0.1:${s.httpPort}/healthz`)).json()) as {
      media: { available: boolean; mode: string; reason: string };
    };
    assert.deepEqual([node.media.available, node.media.mode], [false, 'none']);
    assert.match(node.media.reason, /mediasoup-worker/);
    s.child.kill('SIGTERM');
    assert.equal(await s.exited, 0, s.output());
  });
});
