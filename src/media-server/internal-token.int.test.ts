/**
 * The internal API's token against requests written byte for byte on a socket: however the
 * path of an internal route is spelled (percent-encoded, doubled or trailing slash, upper case,
 * absolute-form request line), a request without the right `X-Internal-Token` is refused (401,
 * or 404 where no route matches) and creates nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaServer } from './server.js';
import { rawRequest, type RawResponse } from '../testing/raw-http.js';
import {
  call,
  mediaSkipReason,
  room,
  startTestMediaServer,
  TEST_TOKEN,
  type InfoData,
} from './testing/harness.js';

void describe('media server internal token, path spellings', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let port: number;

  before(async () => {
    server = await startTestMediaServer();
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    await server?.close();
  });

  const stats = async () => (await call<InfoData>(server, 'GET', '/internal/info')).body.data.stats;
  const send = (
    method: string,
    target: string,
    token: string | null,
    body = '',
  ): Promise<RawResponse> => {
    const lines = [`${method} ${target} HTTP/1.1`, `host: 127.0.0.1:${port}`];
    if (body) lines.push('content-type: application/json');
    if (token !== null) lines.push(`x-internal-token: ${token}`);
    return rawRequest(port, lines.join('\r\n'), body);
  };
  const createBody = () => JSON.stringify({ room_code: room() });

  const spellings = () => [
    '/%69nternal/v1/routers',
    '/%69%6E%74%65%72%6E%61%6C/v1/routers',
    '/internal/v1/%72outers',
    '/internal/%76%31/routers',
    '//internal/v1/routers',
    '/internal//v1/routers',
    '/internal/v1/routers/',
    '/INTERNAL/v1/routers',
    '/internal/v1/routers?x-internal-token=nope',
    '/internal/./v1/routers',
    '/x/../internal/v1/routers',
    `http://127.0.0.1:${port}/internal/v1/routers`,
    `http://127.0.0.1:${port}/%69nternal/v1/routers`,
    `http://evil.example/internal/v1/routers`,
  ];

  void it('refuses every spelling of router creation without the token, creating nothing', async () => {
    const before = await stats();
    for (const target of spellings()) {
      for (const token of [
        null,
        '',
        'wrong-token',
        `${TEST_TOKEN}x`,
        `${TEST_TOKEN.slice(0, -1)}é`,
      ]) {
        const res = await send('POST', target, token, createBody());
        assert.ok(
          res.status === 401 || res.status === 404,
          `POST ${target} (token ${String(token)}): ${res.head}\n${res.body}`,
        );
        if (res.status === 401) {
          assert.equal(
            (JSON.parse(res.body) as { reason?: string }).reason,
            'INTERNAL_TOKEN_INVALID',
          );
        }
      }
    }
    assert.deepEqual(await stats(), before, 'no router was created');
  });

  void it('refuses the other internal routes spelled differently, too', async () => {
    const code = room();
    assert.equal(
      (await call(server, 'POST', '/internal/v1/routers', { room_code: code })).status,
      201,
    );
    for (const target of [
      '/%69nternal/info',
      '/internal/%69nfo',
      `http://127.0.0.1:${port}/internal/info`,
      '/%69nternal/v1/events',
      '/internal/v1/rooms/some-room/%72outer',
      '/internal/v1/rooms',
      '/internal/v1/%72ooms',
      `/internal/v1/rooms/${code}/producers`,
      `/internal/v1/rooms/${code}/%70roducers`,
      `/%69nternal/v1/rooms/${code}/producers`,
      `//internal/v1/rooms/${code}/producers`,
      `/internal/v1/rooms/${code}/producers/`,
      `http://127.0.0.1:${port}/internal/v1/rooms/${code}/producers`,
    ]) {
      const res = await send('GET', target, null);
      assert.ok(res.status === 401 || res.status === 404, `GET ${target}: ${res.head}`);
      assert.doesNotMatch(
        res.body,
        /mediasoup_version|worker_pid|text\/event-stream|room_codes|"producers"/,
      );
    }
    assert.equal((await send('GET', '/internal/v1/rooms', TEST_TOKEN)).status, 200);
    const listed = await send('GET', `/internal/v1/rooms/${code}/%70roducers`, TEST_TOKEN);
    assert.equal(listed.status, 200, listed.body);
    assert.match(listed.body, /"producers":\[\]/);
  });

  void it('refuses a drain without the token, however spelled: the server still takes rooms', async () => {
    const draining = async () =>
      (await call<InfoData>(server, 'GET', '/internal/info')).body.data.draining;
    const body = JSON.stringify({ draining: true });
    for (const target of ['/internal/v1/drain', '/%69nternal/v1/drain', '/internal/v1/%64rain']) {
      for (const token of [null, '', 'wrong-token', `${TEST_TOKEN}x`]) {
        const res = await send('POST', target, token, body);
        assert.ok(res.status === 401 || res.status === 404, `POST ${target}: ${res.head}`);
      }
    }
    assert.equal(await draining(), false);
    // With the token it drains, and undrains.
    assert.equal((await send('POST', '/internal/v1/drain', TEST_TOKEN, body)).status, 200);
    assert.equal(await draining(), true);
    const undrain = JSON.stringify({ draining: false });
    assert.equal((await send('POST', '/internal/v1/drain', TEST_TOKEN, undrain)).status, 200);
    assert.equal(await draining(), false);
  });

  void it('routes an encoded spelling like the plain one once the token is right', async () => {
    // The spellings above reach the router creation route: with the token they create.
    const before = (await stats()).routers;
    const encoded = await send('POST', '/%69nternal/v1/routers', TEST_TOKEN, createBody());
    assert.equal(encoded.status, 201, encoded.body);
    const absolute = await send(
      'POST',
      `http://127.0.0.1:${port}/internal/v1/routers`,
      TEST_TOKEN,
      createBody(),
    );
    assert.equal(absolute.status, 201, absolute.body);
    assert.equal((await stats()).routers, before + 2);
  });
});
