import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import {
  clusterSkipReason,
  createTestDatabase,
  deleteKeysWithPrefix,
  freePort,
  mariadbAvailable,
  redisAvailable,
  startPrivateRedis,
  testKeyPrefix,
  testMysqlUrl,
  testRedisUrl,
} from './backends.js';

const execFileAsync = promisify(execFile);

/** True when something accepts TCP connections on 127.0.0.1:`port`. */
function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs clusterSkipReason() in a child process with `env` and reports what it produced. */
async function skipReasonIn(
  env: Record<string, string>,
): Promise<{ value?: string | false; error?: string }> {
  const moduleUrl = new URL('./backends.ts', import.meta.url).href;
  const script = `
    const { clusterSkipReason } = await import(${JSON.stringify(moduleUrl)});
    try {
      console.log(JSON.stringify({ value: await clusterSkipReason() }));
    } catch (error) {
      console.log(JSON.stringify({ error: error.message }));
    }`;
  const { stdout } = await execFileAsync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '--eval', script],
    { env: { ...process.env, ...env }, cwd: fileURLToPath(new URL('../..', import.meta.url)) },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
    value?: string | false;
    error?: string;
  };
}

describe('testing/backends', { skip: await clusterSkipReason() }, () => {
  const sharedRedis = new Redis(testRedisUrl(), { lazyConnect: true });
  after(() => sharedRedis.quit());

  it('freePort returns a loopback port nobody listens on', async () => {
    const port = await freePort();
    assert.ok(Number.isInteger(port) && port > 0 && port < 65_536);
    assert.equal(await portAnswers(port), false);
  });

  it('freePort never hands out a port twice in one process (taken before anything binds)', async () => {
    // 400 draws from 12,000 ports: without the check, about 6 repeats are expected.
    const ports = await Promise.all(Array.from({ length: 400 }, () => freePort()));
    assert.equal(new Set(ports).size, ports.length);
  });

  it('availability checks: true for the shared backends, false fast for a closed port', async () => {
    assert.equal(await mariadbAvailable(), true);
    assert.equal(await redisAvailable(), true);
    assert.equal(await clusterSkipReason(), false);

    const closed = await freePort();
    const started = Date.now();
    assert.equal(await mariadbAvailable(`mysql://root@127.0.0.1:${closed}`), false);
    assert.equal(await redisAvailable(`redis://127.0.0.1:${closed}`), false);
    assert.ok(Date.now() - started < 2_500, 'checks against a closed port must fail fast');
  });

  it('clusterSkipReason: a hint locally, an error naming the service in CI', async () => {
    const closed = await freePort();
    const redisDown = { ROOMS_TEST_REDIS_URL: `redis://127.0.0.1:${closed}` };

    const local = await skipReasonIn({ ...redisDown, CI: 'false' });
    assert.equal(typeof local.value, 'string');
    assert.match(local.value as string, /^Redis \(127\.0\.0\.1:\d+\) not reachable/);
    assert.doesNotMatch(local.value as string, /MariaDB/);
    assert.match(local.value as string, /Running the cluster tests/);

    const ci = await skipReasonIn({ ...redisDown, CI: 'true' });
    assert.equal(ci.value, undefined);
    assert.match(ci.error ?? '', /Redis .* not reachable in CI/);
  });

  it('createTestDatabase creates a utf8mb4 database that drop() removes, idempotently', async (t) => {
    const db = await createTestDatabase();
    const other = await createTestDatabase();
    t.after(() => Promise.all([db.drop(), other.drop()]));

    assert.match(db.name, /^rooms_t_\d+_[0-9a-f]+$/);
    assert.notEqual(db.name, other.name);
    assert.equal(db.url, `${testMysqlUrl().replace(/\/$/, '')}/${db.name}`);

    const admin = await createConnection({ uri: testMysqlUrl() });
    try {
      const schemaOf = async (name: string) => {
        const [rows] = await admin.query(
          'SELECT DEFAULT_CHARACTER_SET_NAME AS charset FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?',
          [name],
        );
        return rows as { charset: string }[];
      };
      assert.deepEqual(await schemaOf(db.name), [{ charset: 'utf8mb4' }]);

      // The URL really points at the new database.
      const conn = await createConnection({ uri: db.url });
      try {
        await conn.query('CREATE TABLE probe (id INT PRIMARY KEY, text VARCHAR(20))');
        await conn.query('INSERT INTO probe VALUES (1, ?)', ['ünïcode 🎉']);
        const [rows] = await conn.query('SELECT DATABASE() AS db, text FROM probe');
        assert.deepEqual(rows, [{ db: db.name, text: 'ünïcode 🎉' }]);
      } finally {
        await conn.end();
      }

      await db.drop();
      assert.deepEqual(await schemaOf(db.name), []);
      await db.drop(); // idempotent
      assert.equal((await schemaOf(other.name)).length, 1, 'only its own database is dropped');
    } finally {
      await admin.end();
    }
  });

  it('testKeyPrefix is unique and deleteKeysWithPrefix deletes only its keys', async (t) => {
    const prefix = testKeyPrefix();
    const otherPrefix = testKeyPrefix();
    assert.match(prefix, /^rooms:t:[0-9a-f]+:$/);
    assert.notEqual(prefix, otherPrefix);
    t.after(() => deleteKeysWithPrefix(testRedisUrl(), otherPrefix));

    // More keys than one SCAN/UNLINK batch, plus neighbours that must survive.
    const count = 1_234;
    const pipeline = sharedRedis.pipeline();
    for (let i = 0; i < count; i++) pipeline.set(`${prefix}k${i}`, String(i));
    pipeline.set(`${otherPrefix}keep`, '1');
    pipeline.set(`${otherPrefix}${prefix}`, 'contains the prefix, does not start with it');
    pipeline.set(`${prefix.slice(0, -1)}-sibling`, 'prefix without its final colon');
    await pipeline.exec();
    t.after(() => sharedRedis.del(`${prefix.slice(0, -1)}-sibling`));

    assert.equal(await deleteKeysWithPrefix(testRedisUrl(), prefix), count);
    assert.equal(await sharedRedis.exists(`${prefix}k0`, `${prefix}k${count - 1}`), 0);
    assert.equal(await sharedRedis.get(`${otherPrefix}keep`), '1');
    assert.equal(await sharedRedis.exists(`${otherPrefix}${prefix}`), 1);
    assert.equal(await sharedRedis.exists(`${prefix.slice(0, -1)}-sibling`), 1);
    assert.equal(await deleteKeysWithPrefix(testRedisUrl(), prefix), 0);

    await assert.rejects(deleteKeysWithPrefix(testRedisUrl(), ''), /empty prefix/);
  });

  it('startPrivateRedis: own server, FLUSHALL there spares the shared Redis, stop() stops it', async (t) => {
    const sharedKey = `${testKeyPrefix()}survivor`;
    await sharedRedis.set(sharedKey, 'still here');
    t.after(() => sharedRedis.del(sharedKey));

    const privateRedis = await startPrivateRedis();
    t.after(() => privateRedis.stop());
    assert.equal(privateRedis.url, `redis://127.0.0.1:${privateRedis.port}`);
    assert.notEqual(privateRedis.url, testRedisUrl());
    assert.ok(existsSync(privateRedis.dir));

    const client = new Redis(privateRedis.url, { lazyConnect: true });
    try {
      assert.equal(await client.ping(), 'PONG');
      await client.set('only-here', '1');
      assert.equal(await client.flushall(), 'OK');
      assert.equal(await client.dbsize(), 0);
    } finally {
      client.disconnect();
    }
    assert.equal(await sharedRedis.get(sharedKey), 'still here');

    await privateRedis.stop();
    await privateRedis.stop(); // idempotent
    assert.equal(processAlive(privateRedis.pid), false, 'redis-server process is gone');
    assert.equal(await portAnswers(privateRedis.port), false, 'its port is closed');
    assert.equal(await redisAvailable(privateRedis.url), false);
    assert.equal(existsSync(privateRedis.dir), false, 'its temp dir is removed');
  });
});
