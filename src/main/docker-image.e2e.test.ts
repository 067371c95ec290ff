/**
 * The container image and the compose file, for real: a Docker daemon of the test's own
 * (src/testing/docker-daemon.ts; no bridge, host networking only) builds the project's
 * Dockerfile unchanged on a stand-in of its `node:20-bookworm-slim` base, runs it with
 * `--network host`, and checks it as a team would in its first hour: Docker's health check
 * turns healthy, `/healthz` reports the embedded media server, a user signs up, creates a
 * meeting (with the media server's router) and a voice room, and `docker stop` drains the node
 * and it exits 0 with its data kept in the volume. `deploy/compose.yaml` is validated with
 * Debian's docker-compose, then brought up as it is on host networking, on stand-ins of the
 * MariaDB, Redis and coturn images (src/testing/compose-stand-ins.ts) and on free ports: its
 * three nodes serve one cluster through the standalone media server, and coturn listens on
 * the port the nodes' TURN URLs name. The first build takes minutes (the mediasoup worker is
 * built from source where its prebuilt binary cannot be fetched; the stand-ins install
 * Debian's packages); later ones reuse the layers.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../testing/backends.js';
import {
  dockerSkipReason,
  ensureBaseImage,
  startDockerDaemon,
  type DockerDaemon,
} from '../testing/docker-daemon.js';
import { ensureComposeStandIns } from '../testing/compose-stand-ins.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const IMAGE = 'echochat-rooms:test';

void describe('the container image', { skip: dockerSkipReason() }, () => {
  let daemon: DockerDaemon;
  const name = `echochat-test-${process.pid}`;
  const volume = `echochat-test-data-${process.pid}`;

  before(async () => {
    daemon = await startDockerDaemon();
    ensureBaseImage(daemon);
  });
  after(async () => {
    if (!daemon) return;
    for (const args of [
      ['rm', '-f', name],
      ['volume', 'rm', '-f', volume],
    ]) {
      try {
        daemon.docker(args);
      } catch {
        // not made
      }
    }
    await daemon.stop();
  });

  void it('builds, runs healthy on the host network, serves rooms and meetings, stops cleanly', async () => {
    daemon.docker(['build', '--network', 'host', '-t', IMAGE, ROOT], { timeoutMs: 1_500_000 });
    const [http, grpc, media] = [await freePort(), await freePort(), await freePort()];
    daemon.docker([
      ...['run', '-d', '--name', name, '--network', 'host', '-v', `${volume}:/data`],
      ...['-e', 'ROOMS_HTTP_HOST=127.0.0.1', '-e', `ROOMS_HTTP_PORT=${http}`],
      ...['-e', `ROOMS_GRPC_PORT=${grpc}`, '-e', `ROOMS_MEDIA_PORT=${media}`],
      ...['-e', 'ROOMS_MEDIA_WORKERS=1', '-e', 'ROOMS_BCRYPT_COST=4'],
      IMAGE,
    ]);
    const base = `http://127.0.0.1:${http}`;
    const logs = () => daemon.docker(['logs', '--tail', '40', name]);
    const health = () =>
      daemon.docker(['inspect', '--format', '{{.State.Health.Status}}', name]).trim();
    const deadline = Date.now() + 90_000;
    while (health() !== 'healthy') {
      assert.ok(Date.now() < deadline, `not healthy (${health()}): ${logs()}`);
      await sleep(1_000);
    }
    const healthz = (await (await fetch(`${base}/healthz`)).json()) as {
      status: string;
      media: { available: boolean; mode: string };
    };
    assert.deepEqual(
      [healthz.status, healthz.media],
      ['ok', { available: true, mode: 'embedded' }],
    );

    const post = (url: string, body: object, token?: string) => api(base, url, body, token);
    const account = { username: 'docker_user', password: 'secret123' };
    await post('/auth/register', account);
    const token = (await post('/auth/login', account)).access_token as string;
    const meeting = await post('/meeting/rooms', { title: 'in a container' }, token);
    assert.match((meeting.room as { room_code: string }).room_code, /^\d{3}-\d{3}-\d{3}$/);
    assert.ok(meeting.router_id, 'the embedded media server made the router');
    const room = await post('/voice/rooms', { title: 'in a container' }, token);
    assert.match(room.room_id as string, /^vr_/);

    daemon.docker(['stop', '--time', '30', name], { timeoutMs: 60_000 });
    const exit = daemon.docker(['inspect', '--format', '{{.State.ExitCode}}', name]).trim();
    assert.equal(exit, '0', logs());
    // The data outlives the container: a new one on the same volume finds the account.
    const files = daemon.docker([
      ...['run', '--rm', '--network', 'none', '-v', `${volume}:/data`, '--entrypoint', 'ls'],
      ...[IMAGE, '/data'],
    ]);
    assert.match(files, /rooms\.sqlite/);
  });

  void it('has a compose file docker-compose accepts', () => {
    const config = execFileSync(
      'docker-compose',
      ['-f', path.join(ROOT, 'deploy', 'compose.yaml'), 'config', '--services'],
      { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: daemon.host } },
    );
    assert.deepEqual(config.trim().split('\n').sort(), [
      'coturn',
      'mariadb',
      'media',
      'node-1',
      'node-2',
      'node-3',
      'redis',
      'secrets',
    ]);
  });

  void it('brings the compose cluster up: three nodes, one media server, MariaDB, Redis, coturn', async () => {
    ensureComposeStandIns(daemon);
    const ports: Record<string, number> = {};
    for (const name of [
      ...['ROOMS_HTTP_PORT_1', 'ROOMS_HTTP_PORT_2', 'ROOMS_HTTP_PORT_3'],
      ...['ROOMS_GRPC_PORT_1', 'ROOMS_GRPC_PORT_2', 'ROOMS_GRPC_PORT_3'],
      ...['ROOMS_MEDIA_API_PORT', 'ROOMS_TURN_PORT', 'ROOMS_DB_PORT', 'ROOMS_REDIS_PORT'],
    ]) {
      ports[name] = await freePort();
    }
    const project = `echochat-compose-${process.pid}`;
    const env = {
      ...process.env,
      DOCKER_HOST: daemon.host,
      ROOMS_IMAGE: IMAGE,
      MARIADB_ROOT_PASSWORD: 'compose-test-password',
      // Ranges no other test's media server takes (theirs: 40000-49999 and a few of their own).
      ROOMS_MEDIA_RTC_MIN_PORT: '37000',
      ROOMS_MEDIA_RTC_MAX_PORT: '37099',
      ROOMS_TURN_RELAY_MIN_PORT: '37100',
      ROOMS_TURN_RELAY_MAX_PORT: '37199',
      ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
    };
    const compose = (args: string[], timeoutMs = 120_000) =>
      execFileSync(
        'docker-compose',
        ['-p', project, '-f', path.join(ROOT, 'deploy', 'compose.yaml'), ...args],
        { encoding: 'utf8', env, timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] },
      );
    const logs = () => compose(['logs', '--tail', '30']);
    const nodes = [1, 2, 3].map((n) => `http://127.0.0.1:${ports[`ROOMS_HTTP_PORT_${n}`]}`);
    try {
      compose(['up', '-d'], 600_000);
      const deadline = Date.now() + 180_000;
      for (const node of nodes) {
        for (;;) {
          const status = await fetch(`${node}/healthz`)
            .then(
              async (r) => (await r.json()) as { status: string; media?: { available: boolean } },
            )
            .catch(() => null);
          if (status?.status === 'ok' && status.media?.available) break;
          assert.ok(
            Date.now() < deadline,
            `${node} not healthy: ${JSON.stringify(status)}\n${logs()}`,
          );
          await sleep(1_000);
        }
      }
      // One cluster: the secrets the first start made are every node's (a token of one is
      // good on another), and a room made through one node is read through another.
      const [one, two, three] = nodes as [string, string, string];
      const account = { username: 'compose_user', password: 'secret123' };
      await api(one, '/auth/register', account);
      const token = (await api(two, '/auth/login', account)).access_token as string;
      const room = await api(three, '/voice/rooms', { title: 'compose room' }, token);
      const read = await fetch(`${one}/api/v1/voice/rooms/${room.room_id as string}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await read.json()) as { code: number; data: unknown };
      assert.equal(body.code, 0, JSON.stringify(body));
      assert.match(JSON.stringify(body.data), /compose room/);
      // Meetings get their router on the standalone media server.
      const meeting = await api(two, '/meeting/rooms', { title: 'compose meeting' }, token);
      assert.ok(meeting.router_id, 'the media server made the router');
      // coturn listens where the nodes' ROOMS_TURN_URLS say.
      await new Promise<void>((resolve, reject) => {
        const socket = connect(ports.ROOMS_TURN_PORT!, '127.0.0.1', () => {
          socket.end();
          resolve();
        });
        socket.on('error', reject);
      });
    } finally {
      compose(['down', '-v', '--timeout', '10'], 180_000);
    }
  });
});

/** A POST to a node's API that must succeed; the answer's `data`. */
async function api(base: string, url: string, body: object, token?: string) {
  const answer = await fetch(`${base}/api/v1${url}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const envelope = (await answer.json()) as { code: number; data: Record<string, unknown> };
  assert.equal(envelope.code, 0, `${url}: ${JSON.stringify(envelope)}`);
  return envelope.data;
}
