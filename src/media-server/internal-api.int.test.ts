/**
 * The internal API against real mediasoup workers: every endpoint's success and error paths,
 * the token, router idempotency and `stats.routers`, and the events each action reports.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaEvent } from './events.js';
import type { MediaServer } from './server.js';
import {
  call,
  CLIENT_DTLS,
  mediaSkipReason,
  room,
  startTestMediaServer,
  type InfoData,
  type RouterData,
  type TransportData,
} from './testing/harness.js';

void describe('media server internal API', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  const events: MediaEvent[] = [];

  before(async () => {
    server = await startTestMediaServer();
    server.events.subscribe((e) => events.push(e));
  });
  after(async () => {
    await server?.close();
  });

  const info = async () => (await call<InfoData>(server, 'GET', '/internal/info')).body.data;
  const newRouter = async (code = room()) =>
    (await call<RouterData>(server, 'POST', '/internal/v1/routers', { room_code: code })).body.data;
  const newTransport = async (code: string, direction = 'send', peer_id = 'u1') => {
    const r = await call<TransportData>(server, 'POST', '/internal/v1/transports', {
      room_code: code,
      direction,
      peer_id,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data;
  };

  void it('serves /healthz without a token and /internal/* only with the right one', async () => {
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok', workers: 1, workers_alive: 1 });

    const right = await call<InfoData>(server, 'GET', '/internal/info');
    assert.equal(right.status, 200);
    assert.equal(right.body.data.workers.length, 1);
    for (const token of ['wrong-token', null, '']) {
      const wrong = await call(server, 'GET', '/internal/info', undefined, token);
      assert.equal(wrong.status, 401, `token ${String(token)}`);
      assert.equal(wrong.body.reason, 'INTERNAL_TOKEN_INVALID');
    }
    const create = await call(server, 'POST', '/internal/v1/routers', { room_code: room() }, 'x');
    assert.equal(create.status, 401);
    assert.equal((await info()).stats.routers, 0, 'a refused create creates nothing');
  });

  void it('creates one router per room code, idempotently, counted in stats.routers', async () => {
    const before = (await info()).stats.routers;
    const code = room();
    const first = await call<RouterData>(server, 'POST', '/internal/v1/routers', {
      room_code: code,
    });
    assert.equal(first.status, 201);
    assert.equal(first.body.data.created, true);
    assert.equal(first.body.data.room_code, code);
    assert.ok(first.body.data.rtp_capabilities.codecs.some((c) => c.mimeType === 'audio/opus'));
    assert.equal((await info()).stats.routers, before + 1);

    const again = await call<RouterData>(server, 'POST', '/internal/v1/routers', {
      room_code: code,
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.data.created, false);
    assert.equal(again.body.data.router_id, first.body.data.router_id);
    assert.equal((await info()).stats.routers, before + 1, 'no second router');

    // Concurrent creates for a new room share one router too.
    const other = room();
    const racing = await Promise.all(
      [1, 2, 3].map(() =>
        call<RouterData>(server, 'POST', '/internal/v1/routers', { room_code: other }),
      ),
    );
    assert.equal(new Set(racing.map((r) => r.body.data.router_id)).size, 1);
    assert.deepEqual(racing.map((r) => r.status).sort(), [200, 200, 201]);
    assert.equal((await info()).stats.routers, before + 2);

    const byId = await call<RouterData>(
      server,
      'GET',
      `/internal/v1/routers/${first.body.data.router_id}`,
    );
    assert.equal(byId.body.data.room_code, code);
    const byRoom = await call<RouterData>(server, 'GET', `/internal/v1/rooms/${code}/router`);
    assert.equal(byRoom.body.data.router_id, first.body.data.router_id);
    const speakers = await call(
      server,
      'GET',
      `/internal/v1/routers/${first.body.data.router_id}/speakers`,
    );
    assert.deepEqual(speakers.body.data, { dominant: null, volumes: [] });

    const closed = await call(
      server,
      'POST',
      `/internal/v1/routers/${first.body.data.router_id}/close`,
    );
    assert.equal(closed.status, 200);
    assert.equal((await info()).stats.routers, before + 1);
    const closedAgain = await call(
      server,
      'POST',
      `/internal/v1/routers/${first.body.data.router_id}/close`,
    );
    assert.equal(closedAgain.status, 404);
    assert.ok(
      events.some(
        (e) =>
          e.type === 'router_closed' &&
          e.router_id === first.body.data.router_id &&
          e.reason === 'closed',
      ),
    );
    // After a close the room gets a fresh router.
    const recreated = await call<RouterData>(server, 'POST', '/internal/v1/routers', {
      room_code: code,
    });
    assert.equal(recreated.status, 201);
    assert.notEqual(recreated.body.data.router_id, first.body.data.router_id);
  });

  void it('answers 404 for unknown ids and 400 for bad bodies on router endpoints', async () => {
    for (const path of [
      '/internal/v1/routers/nope',
      '/internal/v1/rooms/000-000-000/router',
      '/internal/v1/routers/nope/speakers',
    ]) {
      const r = await call(server, 'GET', path);
      assert.equal(r.status, 404, path);
    }
    for (const body of [undefined, {}, { room_code: '' }, { room_code: 'a b' }, { room_code: 7 }]) {
      const r = await call(server, 'POST', '/internal/v1/routers', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.reason, 'VALIDATION');
    }
  });

  void it('creates, connects and closes WebRTC transports', async () => {
    const code = room();
    const router = await newRouter(code);
    const t = await newTransport(code);
    assert.match(t.id, /^[0-9a-f-]{36}$/);
    assert.ok(t.iceParameters.usernameFragment);
    assert.ok(t.iceCandidates.length > 0);
    assert.ok(
      t.iceCandidates.every((c) => c.ip === '127.0.0.1' && c.port >= 40000 && c.port <= 49999),
    );
    assert.ok(t.dtlsParameters.fingerprints.length > 0);
    const byRouterId = await call(server, 'POST', '/internal/v1/transports', {
      router_id: router.router_id,
      direction: 'recv',
    });
    assert.equal(byRouterId.status, 201);

    const bad = [
      { room_code: code, direction: 'sideways' },
      { direction: 'send' },
      { room_code: code, router_id: router.router_id, direction: 'send' },
    ];
    for (const body of bad) {
      assert.equal(
        (await call(server, 'POST', '/internal/v1/transports', body)).status,
        400,
        JSON.stringify(body),
      );
    }
    assert.equal(
      (
        await call(server, 'POST', '/internal/v1/transports', {
          room_code: '999-999-999',
          direction: 'send',
        })
      ).status,
      404,
    );
    assert.equal(
      (
        await call(server, 'POST', '/internal/v1/transports', {
          router_id: 'nope',
          direction: 'send',
        })
      ).status,
      404,
    );

    const path = `/internal/v1/transports/${t.id}`;
    assert.equal((await call(server, 'POST', `${path}/connect`, {})).status, 400);
    assert.equal(
      (await call(server, 'POST', `${path}/connect`, { dtls_parameters: { fingerprints: [] } }))
        .status,
      400,
    );
    const connected = await call(server, 'POST', `${path}/connect`, {
      dtls_parameters: CLIENT_DTLS,
    });
    assert.equal(connected.status, 200, JSON.stringify(connected.body));
    const twice = await call(server, 'POST', `${path}/connect`, { dtls_parameters: CLIENT_DTLS });
    assert.equal(twice.status, 409, JSON.stringify(twice.body));
    assert.equal(
      (
        await call(server, 'POST', '/internal/v1/transports/nope/connect', {
          dtls_parameters: CLIENT_DTLS,
        })
      ).status,
      404,
    );

    const stats = await call<{ stats: { type: string }[] }>(server, 'GET', `${path}/stats`);
    assert.equal(stats.status, 200);
    assert.equal(stats.body.data.stats[0]?.type, 'webrtc-transport');

    assert.equal((await call(server, 'POST', `${path}/close`)).status, 200);
    assert.equal((await call(server, 'POST', `${path}/close`)).status, 404);
    assert.equal((await call(server, 'GET', `${path}/stats`)).status, 404);
    const closed = events.find((e) => e.type === 'transport_closed' && e.transport_id === t.id);
    assert.ok(closed && closed.type === 'transport_closed');
    assert.equal(closed.reason, 'closed');
    assert.equal(closed.peer_id, 'u1');
    assert.equal(closed.room_code, code);
    assert.equal(closed.direction, 'send', 'the direction it was created with');
  });
});
