/**
 * Every answer of a node carries the browser's security headers, tried on the node's own
 * HTTP app (inject): the web client's page at `/` and at a client route, its assets, an API
 * answer (a success, a refusal, a 404), an admin refusal, and Swagger UI at `/docs`, which
 * keeps a policy of its own that its page needs.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';

const PAGE = '<!doctype html><title>rooms</title><script src="/assets/index-Q1.js"></script>';

/** The CSP as directive → sources. */
function policyOf(res: LightMyRequestResponse): Map<string, string[]> {
  const header = res.headers['content-security-policy'];
  assert.equal(typeof header, 'string', `${res.statusCode} has no CSP`);
  return new Map(
    (header as string)
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

function assertCommonHeaders(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(res.headers['referrer-policy'], 'no-referrer', what);
  assert.ok(res.headers['x-frame-options'], `${what}: no X-Frame-Options`);
}

describe('security headers on every answer', () => {
  let app: TestHttpApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-headers-'));
    await mkdir(path.join(dir, 'assets'), { recursive: true });
    await writeFile(path.join(dir, 'index.html'), PAGE);
    await writeFile(path.join(dir, 'assets', 'index-Q1.js'), 'console.log(1)');
    app = await startTestHttpApp(
      { ROOMS_ADMIN_TOKEN: 'headers-admin-token-0123' },
      { web: { dist: dir } },
    );
  });
  after(async () => {
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the page at / and at a client route cannot be framed and runs only its own code', async () => {
    for (const url of ['/', '/meeting/835-000-036', '/voice/vr_x']) {
      const res = await app.http.inject(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, PAGE, url);
      assertCommonHeaders(res, url);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
      const csp = policyOf(res);
      assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], url);
      assert.deepEqual(csp.get('script-src'), ["'self'"], url);
      assert.deepEqual(csp.get('script-src-attr'), ["'none'"], url);
      assert.deepEqual(csp.get('object-src'), ["'none'"], url);
      assert.deepEqual(csp.get('base-uri'), ["'self'"], url);
      // The API and /ws on the page's own origin; media streams as blobs.
      assert.deepEqual(csp.get('connect-src'), ["'self'"], url);
      assert.ok(csp.get('media-src')?.includes('blob:'), url);
      // A node over plain HTTP must keep loading its own scripts.
      assert.equal(csp.has('upgrade-insecure-requests'), false, url);
    }
  });

  it('assets, API answers, refusals and 404s carry them too', async () => {
    const answers = {
      asset: await app.http.inject('/assets/index-Q1.js'),
      health: await app.http.inject('/healthz'),
      unauthenticated: await app.http.inject('/api/v1/voice/wallet'),
      noRoute: await app.http.inject('/api/v1/no-such-route'),
      badJson: await app.http.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers: { 'content-type': 'application/json' },
        payload: '{not json',
      }),
      admin: await app.http.inject('/api/v1/admin/cells'),
    };
    assert.deepEqual(
      Object.fromEntries(Object.entries(answers).map(([k, r]) => [k, r.statusCode])),
      { asset: 200, health: 200, unauthenticated: 401, noRoute: 404, badJson: 400, admin: 401 },
    );
    for (const [what, res] of Object.entries(answers)) {
      assertCommonHeaders(res, what);
      assert.deepEqual(policyOf(res).get('frame-ancestors'), ["'none'"], what);
    }
  });

  it('Swagger UI at /docs keeps the policy its page needs', async () => {
    let res = await app.http.inject('/docs');
    if (res.statusCode === 302) res = await app.http.inject(res.headers.location as string);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /swagger/i);
    assertCommonHeaders(res, '/docs');
    const csp = policyOf(res);
    assert.deepEqual(csp.get('script-src'), ["'self'"]);
    assert.deepEqual(csp.get('frame-ancestors'), ["'self'"]);
    // The page's own script and the document it reads are served, under the same headers.
    const initializer = await app.http.inject('/docs/static/swagger-initializer.js');
    assert.equal(initializer.statusCode, 200);
    assertCommonHeaders(initializer, 'initializer');
    const json = await app.http.inject('/docs/json');
    assert.equal(json.statusCode, 200);
    assertCommonHeaders(json, '/docs/json');
  });
});
