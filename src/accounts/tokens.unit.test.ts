import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from 'jose';
import { JWT_ISSUER, JwtTokens, type AuthIdentity } from './tokens.js';

const SECRET = 'unit-test-secret-that-is-at-least-32-bytes';
const TTL_S = 3_600;
const T0 = Date.UTC(2026, 3, 21, 8, 30, 0);
const alice: AuthIdentity = { userId: '42', appCode: 'default', username: 'Alice' };

function clockAt(ms: number) {
  const clock = { now: ms, nowMs: () => clock.now };
  return clock;
}

function tokens(options: { secret?: string; now?: number; algorithm?: 'HS256' | 'HS512' } = {}) {
  const clock = clockAt(options.now ?? T0);
  const t = new JwtTokens({
    secret: options.secret ?? SECRET,
    ttlS: TTL_S,
    clock,
    ...(options.algorithm ? { algorithm: options.algorithm } : {}),
  });
  return { t, clock };
}

const key = (secret = SECRET) => new TextEncoder().encode(secret);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token signed with our secret but with the given claims, to probe the claim checks. */
async function signed(claims: Record<string, unknown>, sub = '42', iss = JWT_ISSUER) {
  const nowS = Math.floor(T0 / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuer(iss)
    .setIssuedAt(nowS)
    .setExpirationTime(nowS + 60)
    .sign(key());
}

describe('JwtTokens', () => {
  it('issues an HS256 JWT with the documented claims and verifies it', async () => {
    const { t } = tokens();
    const issued = await t.issue(alice);
    assert.equal(issued.expiresIn, TTL_S);
    assert.deepEqual(decodeProtectedHeader(issued.token), { alg: 'HS256', typ: 'JWT' });
    const nowS = Math.floor(T0 / 1000);
    assert.deepEqual(decodeJwt(issued.token), {
      app_code: 'default',
      username: 'Alice',
      sub: '42',
      iss: 'echochat-rooms',
      iat: nowS,
      exp: nowS + TTL_S,
    });
    assert.deepEqual(await t.authenticate(issued.token), alice);
  });

  it('accepts a token until it expires, and refuses it from exp on', async () => {
    const { t, clock } = tokens();
    const { token } = await t.issue(alice);
    clock.now = T0 + TTL_S * 1000 - 1;
    assert.deepEqual(await t.authenticate(token), alice);
    clock.now = T0 + TTL_S * 1000;
    assert.equal(await t.authenticate(token), null);
    clock.now = T0 + 30 * 86_400_000;
    assert.equal(await t.authenticate(token), null);
  });

  it('refuses a token signed with another secret', async () => {
    const { token } = await tokens({ secret: 'another-secret-that-is-also-32-bytes-long' }).t.issue(
      alice,
    );
    assert.equal(await tokens().t.authenticate(token), null);
  });

  it('refuses alg none, with or without a signature', async () => {
    const { t } = tokens();
    const nowS = Math.floor(T0 / 1000);
    const payload = { sub: '42', app_code: 'default', username: 'Alice', iss: JWT_ISSUER };
    const unsecured = new UnsecuredJWT(payload)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + 60)
      .encode();
    assert.equal(await t.authenticate(unsecured), null);
    const claims = { ...payload, iat: nowS, exp: nowS + 60 };
    const handmade = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    assert.equal(await t.authenticate(handmade), null);
    // A genuine signature kept under an `alg: none` header is refused all the same.
    const genuine = (await t.issue(alice)).token.split('.');
    assert.equal(await t.authenticate(`${b64({ alg: 'none' })}.${genuine[1]}.${genuine[2]}`), null);
  });

  it('refuses a tampered payload or signature', async () => {
    const { t } = tokens();
    const [header, payload, signature] = (await t.issue(alice)).token.split('.') as [
      string,
      string,
      string,
    ];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    for (const change of [{ sub: '1' }, { app_code: 'other' }, { exp: 9_999_999_999 }]) {
      const forged = `${header}.${b64({ ...claims, ...change })}.${signature}`;
      assert.equal(await t.authenticate(forged), null, JSON.stringify(change));
    }
    const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    assert.equal(await t.authenticate(`${header}.${payload}.${flipped}`), null);
    assert.equal(await t.authenticate(`${header}.${payload}.`), null);
  });

  it('refuses a token signed with another HMAC algorithm, even with the same secret', async () => {
    const { token } = await tokens({ algorithm: 'HS512' }).t.issue(alice);
    assert.equal(await tokens().t.authenticate(token), null);
    assert.deepEqual(await tokens({ algorithm: 'HS512' }).t.authenticate(token), alice);
  });

  it('refuses tokens with a wrong issuer or missing or malformed claims', async () => {
    const { t } = tokens();
    const good = { app_code: 'default', username: 'Alice' };
    assert.deepEqual(await t.authenticate(await signed(good)), alice);
    assert.equal(await t.authenticate(await signed(good, '42', 'someone-else')), null);
    assert.equal(await t.authenticate(await signed({ username: 'Alice' })), null);
    assert.equal(await t.authenticate(await signed({ app_code: 'default' })), null);
    assert.equal(await t.authenticate(await signed(good, 'alice')), null);
    assert.equal(await t.authenticate(await signed(good, '0')), null);
    assert.equal(await t.authenticate(await signed({ ...good, app_code: 'Bad App' })), null);
    assert.equal(await t.authenticate(await signed({ ...good, username: 7 })), null);
  });

  it('answers null for garbage, never throws', async () => {
    const { t } = tokens();
    for (const junk of ['', 'abc', 'a.b.c', '...', 'Bearer x', 'x'.repeat(10_000)]) {
      assert.equal(await t.authenticate(junk), null, junk.slice(0, 20));
    }
  });

  it('refuses a secret shorter than 32 bytes and a bad TTL', () => {
    assert.throws(() => tokens({ secret: 'x'.repeat(31) }), /at least 32 bytes/);
    assert.doesNotThrow(() => tokens({ secret: 'x'.repeat(32) }));
    assert.throws(() => new JwtTokens({ secret: SECRET, ttlS: 0, clock: clockAt(T0) }), /TTL/);
  });
});
