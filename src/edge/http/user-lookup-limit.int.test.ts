/**
 * `GET /api/v1/users?ids=` as a harvester uses it: 100 ids a page, page after page, to list
 * every login name of the app. Each caller may look up a number of ids per window; past it
 * 429 `USER_LOOKUP_RATE_LIMITED` (nothing counted), while other users are still answered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';
import { meetingClient } from '../../meeting/api/testing/meeting-client.js';

describe('user lookups per caller', () => {
  let app: TestHttpApp;
  const c = meetingClient(() => app.http);

  before(async () => {
    app = await startTestHttpApp({
      ROOMS_USER_LOOKUPS_PER_USER: '250',
      ROOMS_USER_LOOKUP_WINDOW_S: '600',
    });
    await c.users(['harvester', 'reader', 'named']);
  });
  after(() => app?.close());

  const page = async (as: string, from: number, count: number) => {
    const ids = Array.from({ length: count }, (_, i) => from + i);
    const res = await app.http.inject({
      method: 'GET',
      url: `/api/v1/users?ids=${ids.join(',')}`,
      headers: { authorization: `Bearer ${c.tokens[as]}` },
    });
    const body = res.json<{ reason?: string; message: string; data?: { list: unknown[] } }>();
    return { status: res.statusCode, body, retryAfter: res.headers['retry-after'] };
  };

  it('250 ids per window, then 429; a refused page counts nothing; others are served', async () => {
    assert.equal((await page('harvester', 1, 100)).status, 200);
    // Repeats count once: 100 distinct ids.
    assert.equal((await page('harvester', 101, 100)).status, 200);
    const over = await page('harvester', 201, 100);
    assert.equal(over.status, 429, JSON.stringify(over.body));
    assert.equal(over.body.reason, 'USER_LOOKUP_RATE_LIMITED');
    assert.match(over.body.message, /^查询用户过于频繁，请 \d+ 秒后重试$/);
    assert.ok(Number(over.retryAfter) >= 1);
    // What is left of the allowance is still there.
    assert.equal((await page('harvester', 201, 50)).status, 200);
    assert.equal((await page('harvester', 251, 1)).status, 429);
    // Another user still gets names.
    const theirs = await page('reader', c.ids.named!, 1);
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.data!.list.length, 1);
  });
  it('a name search counts its limit against the same allowance', async () => {
    await c.users(['searcher']);
    const search = (limit: number) =>
      app.http.inject({
        method: 'GET',
        url: `/api/v1/users/search?prefix=name&limit=${limit}`,
        headers: { authorization: `Bearer ${c.tokens.searcher}` },
      });
    for (let i = 0; i < 12; i++) assert.equal((await search(20)).statusCode, 200);
    assert.equal((await page('searcher', 1, 10)).status, 200, '240 + 10 = 250');
    const over = await search(1);
    assert.equal(over.statusCode, 429);
    assert.equal(over.json<{ reason: string }>().reason, 'USER_LOOKUP_RATE_LIMITED');
  });
});
