/**
 * `npm run start:media` (src/media-server/main.ts) as a real process: it reads only the media
 * server's variables, so it starts beside a cluster-mode environment the rooms node would
 * refuse, and it exits 2 naming the variable when its own settings are missing or bad.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { freePort } from '../testing/backends.js';
import {
  EXIT_TIMEOUT_MS,
  READY_TIMEOUT_MS,
  ServerProcess,
  TEST_TIMEOUT_MS,
  reportingOutput,
  waitForHealthy,
} from '../testing/server-process.js';
import { mediaSkipReason } from './testing/harness.js';

const SCRIPT = 'src/media-server/main.ts';
const TOKEN = 'standalone-e2e-token-0123';

void describe('npm run start:media', { timeout: TEST_TIMEOUT_MS }, () => {
  const started: ServerProcess[] = [];
  after(async () => {
    for (const s of started) await s.stop();
  });

  void it(
    "starts with only its own variables, whatever the node's settings (mysql, no secrets)",
    { skip: mediaSkipReason() },
    async () => {
      const port = await freePort();
      const media = new ServerProcess(
        'media',
        {
          ROOMS_MEDIA_PORT: String(port),
          ROOMS_MEDIA_INTERNAL_TOKEN: TOKEN,
          ROOMS_MEDIA_WORKERS: '1',
          ROOMS_LOG_LEVEL: 'info',
          // Cluster mode for a rooms node, which would then need ROOMS_JWT_SECRET and
          // ROOMS_GRPC_TOKEN: none of the media server's business.
          ROOMS_DB_URL: 'mysql://rooms:secret@127.0.0.1:3306/rooms',
        },
        SCRIPT,
      );
      started.push(media);
      await reportingOutput([media], async () => {
        const base = `http://127.0.0.1:${port}`;
        const health = (await waitForHealthy(media, base, READY_TIMEOUT_MS)) as unknown as {
          status: string;
          workers: number;
        };
        assert.deepEqual([health.status, health.workers], ['ok', 1]);
        const info = await fetch(`${base}/internal/info`, {
          headers: { 'x-internal-token': TOKEN },
        });
        assert.equal(info.status, 200);
        const body = (await info.json()) as { code: number; data: { workers: unknown[] } };
        assert.deepEqual([body.code, body.data.workers.length], [0, 1]);
        const wrong = await fetch(`${base}/internal/info`, {
          headers: { 'x-internal-token': `${TOKEN}x` },
        });
        assert.equal(wrong.status, 401);
        assert.equal(((await wrong.json()) as { reason: string }).reason, 'INTERNAL_TOKEN_INVALID');
        assert.match(media.stdout, /"node":"[^"]+-media"/, 'logs name the media server');
        await media.stop();
        assert.deepEqual(await media.waitForExit(EXIT_TIMEOUT_MS), { code: 0, signal: null });
      });
    },
  );

  void it('exits 2 naming ROOMS_MEDIA_INTERNAL_TOKEN when it is unset, and a bad value', async () => {
    const media = new ServerProcess(
      'media-no-token',
      { ROOMS_MEDIA_PORT: String(await freePort()), ROOMS_MEDIA_INTERNAL_TOKEN: '' },
      SCRIPT,
    );
    started.push(media);
    await reportingOutput([media], async () => {
      assert.equal((await media.waitForExit(READY_TIMEOUT_MS)).code, 2);
      assert.match(
        media.stderr,
        /invalid configuration:\n {2}ROOMS_MEDIA_INTERNAL_TOKEN: required for a standalone media server/,
      );
    });
    const bad = new ServerProcess(
      'media-bad-port',
      { ROOMS_MEDIA_PORT: '70000', ROOMS_MEDIA_INTERNAL_TOKEN: TOKEN },
      SCRIPT,
    );
    started.push(bad);
    await reportingOutput([bad], async () => {
      assert.equal((await bad.waitForExit(READY_TIMEOUT_MS)).code, 2);
      assert.match(bad.stderr, /\n {2}ROOMS_MEDIA_PORT: /);
    });
  });
});
