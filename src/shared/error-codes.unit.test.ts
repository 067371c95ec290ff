/**
 * Each error code is created once and documented: the registry and the domains' refusal
 * tables are listed in full in docs/errors.md (which the README links), and no module outside them
 * spells a code of its own.
 */
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { invalidArgument as meetingInvalid, meetingReasons } from '../meeting/domain/errors.js';
import { invalidArgument as voiceInvalid, voiceRoomReasons } from '../voice-room/domain/errors.js';
import { errorCatalog, errors } from './error-codes.js';
import { AppError, RateLimitedError } from './errors.js';

const root = new URL('../../', import.meta.url).pathname;
const documented = [
  ...errorCatalog.map((e) => e.code),
  ...voiceRoomReasons.map((r) => r.code),
  ...meetingReasons.map((r) => r.code),
];

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (path.endsWith('.ts') && !/\.(unit|int|e2e)\.test\.ts$|contract\.ts$/.test(path)) {
      if (!path.includes('/testing/')) out.push(path);
    }
  }
  return out;
}

void describe('error codes', () => {
  void it('a factory makes the error of its code, kind and filled-in message', () => {
    const error = errors.NODE_DRAINING('node-a');
    assert.ok(error instanceof AppError);
    assert.deepEqual(
      [error.kind, error.code, error.message],
      ['unavailable', 'NODE_DRAINING', 'node node-a is draining'],
    );
    const cause = new Error('socket closed');
    assert.equal(errors.COMMIT_FAILED.withCause(cause).cause, cause);
    const limited = errors.LOGIN_RATE_LIMITED.after(2_500, 3);
    assert.ok(limited instanceof RateLimitedError);
    assert.deepEqual(
      [limited.retryAfterS, limited.message],
      [3, '登录失败次数过多，请 3 秒后重试'],
    );
  });

  void it('every code of every table is defined exactly once, so it has one kind and one text', () => {
    const definitions = [
      ...errorCatalog.map((e) => ({ table: 'src/shared/error-codes.ts', code: e.code })),
      ...voiceRoomReasons.map((r) => ({ table: 'src/voice-room/domain/errors.ts', code: r.code })),
      ...meetingReasons.map((r) => ({ table: 'src/meeting/domain/errors.ts', code: r.code })),
    ];
    const tables = new Map<string, string[]>();
    for (const { table, code } of definitions)
      tables.set(code, [...(tables.get(code) ?? []), table]);
    const twice = [...tables].filter(([, where]) => where.length > 1);
    assert.deepEqual(twice, [], 'codes defined more than once');
    // Bad input is one code for every layer: the domains refuse with the registry's.
    for (const error of [voiceInvalid('seat_count 1-20'), meetingInvalid('title 1-200')]) {
      assert.deepEqual(
        [error.code, error.kind],
        ['INVALID_ARGUMENT', errors.INVALID_ARGUMENT.kind],
      );
    }
  });

  void it('the tables above are all there are', async () => {
    const holders: string[] = [];
    for (const file of await sourceFiles(join(root, 'src'))) {
      const text = await readFile(file, 'utf8');
      const table = /Record<string, readonly \[ErrorKind, string\]>/.test(text);
      if (table) holders.push(file.slice(root.length));
    }
    assert.deepEqual(holders.sort(), [
      'src/meeting/domain/errors.ts',
      'src/shared/error-codes.ts',
      'src/voice-room/domain/errors.ts',
    ]);
  });

  void it('docs/errors.md lists every code, and the README points to it', async () => {
    const docs = await readFile(join(root, 'docs/errors.md'), 'utf8');
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    for (const code of documented) {
      assert.match(docs, new RegExp(`\\|\\s*\`${code}\`\\s*\\|`), `docs/errors.md lacks ${code}`);
    }
    assert.ok(readme.includes('(docs/errors.md)'), 'README links docs/errors.md');
  });

  void it('no module outside the registries spells a code of its own', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(join(root, 'src'))) {
      const text = await readFile(file, 'utf8');
      // A code spelled as a literal: `new AppError('kind', 'CODE', …)`.
      if (/new (AppError|RateLimitedError)\(\s*'[a-z_]+',\s*'/.test(text)) {
        offenders.push(file.slice(root.length));
      }
    }
    assert.deepEqual(offenders, []);
  });
});
