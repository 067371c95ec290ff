/** The command log's redaction: secret-named fields at any depth, nothing else. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { redact, REDACTED } from './admin-inspection-routes.js';

it('redacts every password, hash, secret, token or signature field, at any depth', () => {
  const hash = '$2b$04$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01';
  assert.deepEqual(
    redact({
      type: 'CreateMeeting',
      title: 'Plan',
      password_hash: hash,
      has_password: true,
      nested: [{ invite_token: 'tok', Secret: { a: 1 }, signature: 'sig', Password: 'pw' }],
      api_token: 12345,
      passwd: 'x',
      credentials: ['a'],
      seat_index: 2,
    }),
    {
      type: 'CreateMeeting',
      title: 'Plan',
      password_hash: REDACTED,
      has_password: true,
      nested: [
        { invite_token: REDACTED, Secret: REDACTED, signature: REDACTED, Password: REDACTED },
      ],
      api_token: REDACTED,
      passwd: REDACTED,
      credentials: REDACTED,
      seat_index: 2,
    },
  );
  // No password: null says so and hides nothing.
  assert.deepEqual(redact({ password_hash: null }), { password_hash: null });
  assert.deepEqual(redact([1, 'a', null]), [1, 'a', null]);
});
