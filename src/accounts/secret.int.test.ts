import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { JwtSecretError, resolveJwtSecret, SECRET_FILE_NAME } from './secret.js';

describe('resolveJwtSecret', () => {
  let root: string;
  let seq = 0;
  const freshDir = () => join(root, `d${++seq}`);

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'rooms-secret-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('embedded: generates a secret once into <db dir>/jwt-secret (mode 0600), then reuses it', async () => {
    const dir = freshDir();
    const dbUrl = join(dir, 'rooms.sqlite');
    const first = await resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl });
    assert.ok(Buffer.byteLength(first) >= 32);
    const file = join(dir, SECRET_FILE_NAME);
    assert.equal((await readFile(file, 'utf8')).trim(), first);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(await resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl }), first);
    // The sqlite:// form of the URL names the same file.
    const url = `sqlite://${dbUrl}`;
    assert.equal(await resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl: url }), first);
  });

  it('embedded: processes starting at once agree on one secret and leave no temp file', async () => {
    const dir = freshDir();
    const dbUrl = join(dir, 'rooms.sqlite');
    const secrets = await Promise.all(
      Array.from({ length: 8 }, () =>
        resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl }),
      ),
    );
    assert.equal(new Set(secrets).size, 1);
    assert.deepEqual(await readdir(dir), [SECRET_FILE_NAME]);
  });

  it('embedded: refuses a secret file that is too short, naming the file', async () => {
    const dir = freshDir();
    await resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl: join(dir, 'a.sqlite') });
    await writeFile(join(dir, SECRET_FILE_NAME), 'short\n');
    await assert.rejects(
      resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl: join(dir, 'a.sqlite') }),
      (error: Error) => error instanceof JwtSecretError && error.message.includes(dir),
    );
  });

  it('embedded in memory: a per-process secret, no file', async () => {
    const a = await resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl: ':memory:' });
    const b = await resolveJwtSecret({ configured: null, flavor: 'sqlite', dbUrl: ':memory:' });
    assert.notEqual(a, b);
    assert.ok(Buffer.byteLength(a) >= 32);
  });

  it('a configured secret wins and writes no file', async () => {
    const dir = freshDir();
    const configured = 'configured-secret-of-at-least-32-bytes';
    const dbUrl = join(dir, 'rooms.sqlite');
    assert.equal(await resolveJwtSecret({ configured, flavor: 'sqlite', dbUrl }), configured);
    await assert.rejects(stat(join(dir, SECRET_FILE_NAME)), { code: 'ENOENT' });
    await assert.rejects(
      resolveJwtSecret({ configured: 'x'.repeat(31), flavor: 'sqlite', dbUrl }),
      /ROOMS_JWT_SECRET must be at least 32 bytes/,
    );
  });

  it('cluster: an unset secret is an error naming ROOMS_JWT_SECRET', async () => {
    await assert.rejects(
      resolveJwtSecret({ configured: null, flavor: 'mysql', dbUrl: 'mysql://root@db/rooms' }),
      (error: Error) => error instanceof JwtSecretError && /ROOMS_JWT_SECRET/.test(error.message),
    );
  });
});
