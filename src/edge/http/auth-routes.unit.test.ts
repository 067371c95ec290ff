import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import type { AuthIdentity, Authenticator } from '../../accounts/tokens.js';
import { authOf, bearerTokenOf, requireAuth } from './auth-routes.js';
import { installEnvelopeErrors, sendOk } from '../../shared/http-envelope.js';

const alice: AuthIdentity = { userId: '7', appCode: 'default', username: 'alice' };

/** Accepts exactly the token `good` and records what it was asked. */
function recordingAuthenticator() {
  const seen: string[] = [];
  const authenticator: Authenticator = {
    authenticate: (token) => {
      seen.push(token);
      return Promise.resolve(token === 'good' ? alice : null);
    },
  };
  return { authenticator, seen };
}

/** A module's own plugin guarded as the voice-room and meeting routes will be. */
function app(authenticator: Authenticator) {
  const a = Fastify();
  installEnvelopeErrors(a);
  void a.register((scope, _opts, done) => {
    scope.addHook('preHandler', requireAuth(authenticator));
    scope.get('/guarded', (req, reply) => sendOk(req, reply, authOf(req)));
    done();
  });
  a.get('/unguarded', (req, reply) => sendOk(req, reply, authOf(req)));
  return a;
}

describe('requireAuth', () => {
  it('lets a valid bearer token through and exposes the identity', async () => {
    const { authenticator, seen } = recordingAuthenticator();
    for (const authorization of ['Bearer good', 'bearer good', 'BEARER   good  ']) {
      const res = await app(authenticator).inject({
        method: 'GET',
        url: '/guarded',
        headers: { authorization },
      });
      assert.equal(res.statusCode, 200, authorization);
      assert.deepEqual(res.json<{ data: unknown }>().data, alice);
    }
    assert.deepEqual(seen, ['good', 'good', 'good']);
  });

  it('answers 401 with the envelope for a missing, malformed or refused token', async () => {
    const { authenticator, seen } = recordingAuthenticator();
    const cases: [authorization: string | undefined, reason: string][] = [
      [undefined, 'TOKEN_MISSING'],
      ['', 'TOKEN_MISSING'],
      ['Bearer', 'TOKEN_MISSING'],
      ['Bearer ', 'TOKEN_MISSING'],
      ['Basic Z29vZDpnb29k', 'TOKEN_MISSING'],
      ['Bearer good extra', 'TOKEN_MISSING'],
      ['good', 'TOKEN_MISSING'],
      ['Bearer bad', 'TOKEN_INVALID'],
    ];
    for (const [authorization, reason] of cases) {
      const res = await app(authenticator).inject({
        method: 'GET',
        url: '/guarded',
        headers: authorization === undefined ? {} : { authorization },
      });
      assert.equal(res.statusCode, 401, String(authorization));
      const body = res.json<Record<string, unknown>>();
      assert.deepEqual(
        { ...body, trace_id: typeof body.trace_id, time: typeof body.time },
        { code: 401, message: '未登录或登录已过期', reason, trace_id: 'string', time: 'string' },
        String(authorization),
      );
    }
    assert.deepEqual(seen, ['bad']);
  });

  it('authOf refuses (401) on a route without the guard instead of trusting nothing', async () => {
    const { authenticator } = recordingAuthenticator();
    const res = await app(authenticator).inject({
      method: 'GET',
      url: '/unguarded',
      headers: { authorization: 'Bearer good' },
    });
    assert.equal(res.statusCode, 401);
  });
});

describe('bearerTokenOf', () => {
  it('reads the token of a Bearer authorization header only', () => {
    const of = (authorization?: string) =>
      bearerTokenOf({ headers: authorization === undefined ? {} : { authorization } } as never);
    assert.equal(of('Bearer a.b.c'), 'a.b.c');
    assert.equal(of(undefined), null);
    assert.equal(of('Token a.b.c'), null);
    assert.equal(of('Bearera.b.c'), null);
  });
});
