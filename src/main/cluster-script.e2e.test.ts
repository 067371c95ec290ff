/**
 * `npm run cluster` as a newcomer runs it (here with 2 nodes, 2 media servers and free ports,
 * on a database of its own): it prints each node's and media server's address once all are
 * ready, the media servers registered in Redis; every node serves, a room
 * made on one is read on the other; Ctrl-C drains every node and the script exits 0.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { mediaSkipReason } from '../media-server/testing/harness.js';
import {
  clusterSkipReason,
  connectMysql,
  deleteKeysWithPrefix,
  testKeyPrefix,
  testMysqlUrl,
  testRedisUrl,
} from '../testing/backends.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const skip = (await clusterSkipReason()) || mediaSkipReason();

describe('npm run cluster', { skip, timeout: 120_000 }, () => {
  const name = `rooms_cluster_${Date.now()}`;
  const keyPrefix = testKeyPrefix();
  let dir = '';
  after(async () => {
    const admin = await connectMysql(testMysqlUrl());
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).finally(() => admin.end());
    await deleteKeysWithPrefix(testRedisUrl(), keyPrefix).catch(() => 0);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('starts every node, prints where they are, and drains them all on Ctrl-C', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-cluster-'));
    const db = new URL(testMysqlUrl());
    db.pathname = `/${name}`;
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !k.startsWith('ROOMS_') && k !== 'NODE_TEST_CONTEXT',
      ),
    );
    const child = spawn(process.execPath, ['scripts/cluster.mjs', '--media-servers', '2'], {
      cwd: ROOT,
      env: {
        ...inherited,
        CLUSTER_NODES: '2',
        CLUSTER_BASE_PORT: '0',
        CLUSTER_DIR: dir,
        ROOMS_DB_URL: db.toString(),
        ROOMS_REDIS_URL: testRedisUrl(),
        ROOMS_KEY_PREFIX: keyPrefix,
        ROOMS_MEDIA_WORKERS: '1',
        ROOMS_BCRYPT_COST: '4',
        ROOMS_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      for (let i = 0; i < 600 && !out.includes('cluster: ready'); i++) {
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.match(out, /cluster: ready/, out);
      const urls = [...out.matchAll(/ {2}node-\d: (http:\/\/\S+)/g)].map((m) => m[1]!);
      assert.equal(urls.length, 2, out);
      // Two media servers, each registered in the cluster's media directory.
      assert.match(out, /2 media server\(s\) registered in Redis/, out);
      const redis = new Redis(testRedisUrl());
      try {
        for (const id of ['media-1', 'media-2']) {
          assert.match(out, new RegExp(` {2}${id}: http://127\\.0\\.0\\.1:\\d+`), out);
          const record = await redis.get(`${keyPrefix}media:server:${id}`);
          assert.equal((JSON.parse(record ?? '{}') as { id?: string }).id, id, `${id} registered`);
        }
      } finally {
        redis.disconnect();
      }
      for (const url of urls) {
        // A node probes the media server in the background (its first probe may still be
        // running, or have timed out on a busy machine): wait for the answer, not assume it.
        let body: { media?: { available: boolean } } = {};
        for (let i = 0; i < 200 && body.media?.available !== true; i++) {
          if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
          const health = await fetch(`${url}/healthz`);
          assert.equal(health.status, 200, url);
          body = (await health.json()) as typeof body;
        }
        assert.equal(
          body.media?.available,
          true,
          `every node reaches the media server: ${JSON.stringify(body.media)}`,
        );
      }
      // The secrets file is the cluster's and private.
      assert.equal((await stat(path.join(dir, 'secrets.json'))).mode & 0o077, 0);

      // One cluster: a user registered and a room made on node 1 are served by node 2.
      const json = (r: Response) => r.json() as Promise<{ data: Record<string, string> }>;
      const headers = { 'content-type': 'application/json' };
      const creds = JSON.stringify({ username: 'cluster_user', password: 'secret123' });
      await fetch(`${urls[0]}/api/v1/auth/register`, { method: 'POST', headers, body: creds });
      const login = await json(
        await fetch(`${urls[1]}/api/v1/auth/login`, { method: 'POST', headers, body: creds }),
      );
      const auth = { ...headers, authorization: `Bearer ${login.data.access_token}` };
      const created = await json(
        await fetch(`${urls[0]}/api/v1/voice/rooms`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ title: 'cluster' }),
        }),
      );
      const read = await fetch(`${urls[1]}/api/v1/voice/rooms/${created.data.room_id}`, {
        headers: auth,
      });
      assert.equal(read.status, 200, await read.text());

      child.kill('SIGINT');
      assert.equal(await exited, 0, out);
      assert.match(out, /cluster: stopped\n/);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
