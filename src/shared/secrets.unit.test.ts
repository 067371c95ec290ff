import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { secretEquals } from './secrets.js';

void describe('secretEquals', () => {
  const secret = 'a-secret-of-thirty-two-characters';

  void it('is true only for the exact secret, as a string or as bytes', () => {
    assert.equal(secretEquals(secret, secret), true);
    assert.equal(secretEquals(Buffer.from(secret), secret), true);
    assert.equal(secretEquals(secret, Buffer.from(secret)), true);
  });

  void it('is false, without throwing, for any other value', () => {
    const others: unknown[] = [
      '',
      secret.slice(0, -1),
      `${secret}x`,
      `${secret.slice(0, -1)}é`,
      'é'.repeat(secret.length),
      Buffer.alloc(secret.length, 0xe9),
      secret.toUpperCase(),
      undefined,
      null,
      42,
      [secret],
      { toString: () => secret },
    ];
    for (const given of others) assert.equal(secretEquals(given, secret), false, String(given));
  });

  void it('refuses everything when no secret (or an empty one) is configured', () => {
    for (const expected of [null, undefined, '', Buffer.alloc(0)]) {
      assert.equal(secretEquals('', expected), false);
      assert.equal(secretEquals(secret, expected), false);
    }
  });
});
