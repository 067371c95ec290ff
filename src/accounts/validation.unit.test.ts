import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../shared/errors.js';
import { BcryptPasswordHasher } from './password.js';
import { parseAppCode, parseLoginInput, parseRegisterInput, usernameKey } from './validation.js';

/** Asserts `fn` throws a validation AppError and returns its message. */
function validationError(fn: () => unknown, code = 'VALIDATION'): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    assert.equal(error.kind, 'validation');
    assert.equal(error.code, code);
    return error.message;
  }
  assert.fail('no error thrown');
}

const valid = { username: 'alice', password: 'secret1' };

describe('parseRegisterInput', () => {
  it('accepts a minimal body; nickname and avatar default to null', () => {
    assert.deepEqual(parseRegisterInput(valid), { ...valid, nickname: null, avatar: null });
  });

  it('keeps nickname and avatar, trimmed; empty or null ones count as absent', () => {
    assert.deepEqual(
      parseRegisterInput({
        ...valid,
        nickname: '  爱丽丝 🎧 ',
        avatar: ' https://cdn.example.com/a.png ',
      }),
      { ...valid, nickname: '爱丽丝 🎧', avatar: 'https://cdn.example.com/a.png' },
    );
    assert.deepEqual(parseRegisterInput({ ...valid, nickname: '   ', avatar: '' }), {
      ...valid,
      nickname: null,
      avatar: null,
    });
    assert.deepEqual(parseRegisterInput({ ...valid, nickname: null, avatar: null }), {
      ...valid,
      nickname: null,
      avatar: null,
    });
  });

  it('accepts usernames of 3-32 of [A-Za-z0-9_.-]', () => {
    for (const username of ['abc', 'A.b-c_9', 'x'.repeat(32), '...', 'Bob_2000']) {
      assert.equal(parseRegisterInput({ ...valid, username }).username, username);
    }
  });

  it('refuses other usernames, naming the field', () => {
    for (const username of ['ab', 'x'.repeat(33), 'a b', 'zoë', '<script>', 'a@b', '', 42]) {
      const message = validationError(() => parseRegisterInput({ ...valid, username }));
      assert.match(message, /username/);
    }
  });

  it('accepts passwords of 6-72 characters within bcrypt’s 72 bytes', () => {
    for (const password of ['123456', 'p'.repeat(72), '€'.repeat(24), '密码密码密码']) {
      assert.equal(parseRegisterInput({ ...valid, password }).password, password);
    }
  });

  it('refuses shorter, longer, or over-72-byte passwords', () => {
    // 25 × '€' is 25 characters but 75 bytes: bcrypt would ignore the tail.
    for (const password of ['12345', 'p'.repeat(73), '€'.repeat(25), '', null]) {
      assert.match(
        validationError(() => parseRegisterInput({ ...valid, password })),
        /password/,
      );
    }
  });

  it('refuses long or control-character nicknames and non-http avatars', () => {
    assert.equal(parseRegisterInput({ ...valid, nickname: 'n'.repeat(64) }).nickname?.length, 64);
    for (const nickname of ['n'.repeat(65), 'a\nb', 'nul\u0000', 7]) {
      assert.match(
        validationError(() => parseRegisterInput({ ...valid, nickname })),
        /nickname/,
      );
    }
    const long = `https://x.example/${'a'.repeat(512 - 18)}`;
    assert.equal(long.length, 512);
    assert.equal(parseRegisterInput({ ...valid, avatar: long }).avatar, long);
    for (const avatar of [`${long}b`, 'javascript:alert(1)', 'ftp://x/a.png', 'not a url']) {
      assert.match(
        validationError(() => parseRegisterInput({ ...valid, avatar })),
        /avatar/,
      );
    }
  });

  it('refuses a body that is not an object', () => {
    for (const body of [undefined, null, 'alice', 42, []]) {
      validationError(() => parseRegisterInput(body));
    }
  });
});

describe('parseLoginInput', () => {
  it('takes any non-empty strings (a bad pattern is just a wrong username)', () => {
    assert.deepEqual(parseLoginInput({ username: 'no such user!', password: 'x' }), {
      username: 'no such user!',
      password: 'x',
    });
  });

  it('refuses a missing or non-string field', () => {
    for (const body of [{}, { username: 'alice' }, { password: 'x' }, { ...valid, password: 1 }]) {
      validationError(() => parseLoginInput(body));
    }
  });
});

describe('parseAppCode', () => {
  it('defaults to "default" and accepts [a-z0-9_-]{1,64}', () => {
    assert.equal(parseAppCode(undefined), 'default');
    for (const code of ['a', 'my-app_2', 'x'.repeat(64)]) assert.equal(parseAppCode(code), code);
  });

  it('refuses anything else, a repeated header included', () => {
    for (const code of ['', 'MyApp', 'a b', 'app.io', 'x'.repeat(65), ['a', 'b']]) {
      assert.match(
        validationError(() => parseAppCode(code), 'INVALID_APP_CODE'),
        /X-App-Code/,
      );
    }
  });
});

describe('usernameKey', () => {
  it('lower-cases, so usernames are unique case-insensitively', () => {
    assert.equal(usernameKey('Alice.B-2_X'), 'alice.b-2_x');
    assert.equal(usernameKey('ALICE'), usernameKey('alice'));
  });
});

describe('BcryptPasswordHasher', () => {
  it('hashes with the configured cost and verifies', async () => {
    const hasher = new BcryptPasswordHasher(4);
    const hash = await hasher.hash('secret1');
    assert.match(hash, /^\$2b\$04\$/);
    assert.equal(await hasher.verify('secret1', hash), true);
    assert.equal(await hasher.verify('secret2', hash), false);
    await hasher.burn('anything');
  });

  it('verifies hashes written by bcryptjs ($2a$ and $2b$), as existing users have', async () => {
    const hasher = new BcryptPasswordHasher(10);
    // Made by bcryptjs 3.0.3 (the previous hasher), and by its $2a$ salts (bcryptjs 2.x).
    const vectors: [string, string][] = [
      ['secret1', '$2b$04$LqE5aBrCgFweilkMmu29s.zetsar07uGGBf/9uiV7XPxzCsTuwTLG'],
      ['pässwörd 密码', '$2b$10$rKYT49pmZpSB1zCWUCiii.8xcE6qFyS/AUw5upSoVJqblMona8vYa'],
      ['secret1', '$2a$06$abcdefghijklmnopqrstuuGstAwpoq6Y5k1eQW0T/jZsCx/GttTE2'],
      ['x'.repeat(72), '$2b$04$EymxdSkrqh0/lGnM9lwrHubbaI2JiDnfbwCjylrr2oSlHWruy.MPS'],
      // OpenBSD's published $2a$ test vector.
      ['U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
    ];
    for (const [password, hash] of vectors) {
      assert.equal(await hasher.verify(password, hash), true, hash);
      assert.equal(await hasher.verify(`${password}!`.slice(-72), hash), false, hash);
    }
    assert.equal(await hasher.verify('secret1', 'not a bcrypt hash'), false);
  });

  it('hashes off the event loop: timers keep firing while hashes run', async () => {
    const hasher = new BcryptPasswordHasher(10);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    try {
      await Promise.all(Array.from({ length: 4 }, () => hasher.hash('secret1')));
    } finally {
      clearInterval(timer);
    }
    // Four cost-10 hashes take ~100+ ms of CPU; on the event loop no timer would fire.
    assert.ok(ticks >= 3, `only ${ticks} timer ticks while hashing`);
  });

  it('refuses a cost outside 4..31', () => {
    assert.throws(() => new BcryptPasswordHasher(3), RangeError);
    assert.throws(() => new BcryptPasswordHasher(32), RangeError);
    assert.throws(() => new BcryptPasswordHasher(10.5), RangeError);
  });
});
