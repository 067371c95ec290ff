/** The accounts contract on the embedded backend, and its generated, persisted JWT secret. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authRoutesContract, client, envelope, startTestNode } from './auth-routes.contract.js';

const readSecret = async (dir: string) => (await readFile(join(dir, 'jwt-secret'), 'utf8')).trim();

authRoutesContract('SQLite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rooms-auth-'));
  return {
    env: { ROOMS_DB_URL: join(dir, 'rooms.sqlite') },
    secret: () => readSecret(dir),
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('accounts on the embedded backend (SQLite)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-auth-restart-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates the JWT secret once beside the database: tokens survive a restart', async () => {
    const env = { ROOMS_DB_URL: join(dir, 'restart', 'rooms.sqlite') };
    const first = await startTestNode(env);
    let token: string;
    let secret: string;
    try {
      ({ token } = await client(first).signUp('judy'));
      secret = await readSecret(join(dir, 'restart'));
      assert.ok(Buffer.byteLength(secret) >= 32);
      assert.equal((await stat(join(dir, 'restart', 'jwt-secret'))).mode & 0o777, 0o600);
    } finally {
      await first.close();
    }

    const second = await startTestNode(env);
    try {
      const me = await client(second).me(token);
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(envelope<{ username: string }>(me).data?.username, 'judy');
      assert.equal(await readSecret(join(dir, 'restart')), secret);
    } finally {
      await second.close();
    }
  });

  it('signs with ROOMS_JWT_SECRET when it is set, and writes no secret file', async () => {
    const secret = 'embedded-configured-secret-of-32-bytes+';
    const env = { ROOMS_DB_URL: join(dir, 'configured', 'rooms.sqlite'), ROOMS_JWT_SECRET: secret };
    const node = await startTestNode(env);
    try {
      const { token } = await client(node).signUp('kim');
      await assert.rejects(stat(join(dir, 'configured', 'jwt-secret')), { code: 'ENOENT' });
      // A node on the same database with another secret refuses the token.
      const other = await startTestNode({ ...env, ROOMS_JWT_SECRET: `${secret}-rotated` });
      try {
        assert.equal((await client(other).me(token)).statusCode, 401);
      } finally {
        await other.close();
      }
      assert.equal((await client(node).me(token)).statusCode, 200);
    } finally {
      await node.close();
    }
  });
});
