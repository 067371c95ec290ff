/**
 * The orchestrator client against a real media server (mediasoup workers): the seed's
 * methods end to end, idempotent closes, error kinds, the router-info cache, and the event
 * stream client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaEvent } from '../../media-server/events.js';
import type { MediaServer } from '../../media-server/server.js';
import {
  call,
  CLIENT_DTLS,
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
  TEST_TOKEN,
  waitFor,
} from '../../media-server/testing/harness.js';
import {
  isMediaResourceNotFound,
  isMediaServerError,
} from '../../media-cluster/media-orchestrator.js';
import { AppError } from '../../shared/errors.js';
import {
  opusLevelRtpParameters,
  plainSendTransport,
  RtpSender,
} from '../../media-server/testing/plain-rtp.js';
import { HttpMediaOrchestrator } from './http-media-orchestrator.js';
import { MediaEventStream } from './media-event-stream.js';

void describe('HttpMediaOrchestrator on a real media server', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let media: HttpMediaOrchestrator;
  let stream: MediaEventStream;
  const streamed: MediaEvent[] = [];

  before(async () => {
    server = await startTestMediaServer();
    media = new HttpMediaOrchestrator({
      baseUrl: server.url,
      internalToken: TEST_TOKEN,
      timeoutMs: 5_000,
      closeRetry: 2,
      sleep: () => Promise.resolve(),
    });
    stream = new MediaEventStream({ baseUrl: server.url, internalToken: TEST_TOKEN }, (e) =>
      streamed.push(e),
    );
    await stream.ready;
  });
  after(async () => {
    stream?.close();
    media?.close();
    await server?.close();
  });

  const stats = async () =>
    (await call<{ stats: { routers: number } }>(server, 'GET', '/internal/info')).body.data.stats;

  void it('runs a meeting: router, transports, producer, paused consumer, resume, closes', async () => {
    const code = '835-000-036';
    const routersBefore = (await stats()).routers;
    const router = await media.createRouter(code);
    assert.ok(router.routerId);
    assert.ok(Array.isArray(router.rtpCapabilities.codecs));
    // A second create (the join path) returns the same router and adds none.
    assert.deepEqual(await media.createRouter(code), router);
    assert.equal((await stats()).routers, routersBefore + 1);
    assert.deepEqual(media.resolveRouterInfo(code), { ok: true, ...router });

    const send = await media.createTransport(code, 'send', '16');
    assert.deepEqual(Object.keys(send).sort(), [
      'dtlsParameters',
      'iceCandidates',
      'iceParameters',
      'id',
    ]);
    assert.ok(!send.id.startsWith('noop-'));
    assert.ok(send.iceCandidates.length > 0);
    assert.ok((send.dtlsParameters.fingerprints as unknown[]).length > 0);
    await media.connectTransport(send.id, CLIENT_DTLS);
    const producerId = await media.createProducer(send.id, 'audio', opusRtpParameters());
    const recv = await media.createTransport(code, 'recv', '17');
    const consumer = await media.createConsumer(recv.id, producerId, router.rtpCapabilities);
    assert.deepEqual(Object.keys(consumer).sort(), ['id', 'kind', 'producerId', 'rtpParameters']);
    assert.equal(consumer.producerId, producerId);
    assert.equal(consumer.kind, 'audio');
    const consumerPath = `/internal/v1/consumers/${consumer.id}/stats`;
    assert.equal((await call(server, 'GET', consumerPath)).status, 200);
    await media.resumeConsumer(consumer.id);

    // Each close twice: the second finds nothing (404) and still succeeds.
    for (let i = 0; i < 2; i++) {
      await media.closeConsumer(consumer.id);
      await media.closeProducer(producerId);
      await media.closeTransport(recv.id);
    }
    const missing = await media.resumeConsumer(consumer.id).catch((e: unknown) => e);
    assert.ok(isMediaResourceNotFound(missing), String(missing));

    await media.closeRouter(code);
    await media.closeRouter(code);
    assert.equal(media.resolveRouterInfo(code).ok, false);
    assert.equal((await stats()).routers, routersBefore);
    // The send transport went with the router.
    assert.equal(
      (await call(server, 'POST', `/internal/v1/transports/${send.id}/close`)).status,
      404,
    );

    const types = streamed.map((e) => e.type);
    for (const type of [
      'producer_created',
      'consumer_closed',
      'producer_closed',
      'transport_closed',
      'router_closed',
    ]) {
      assert.ok(types.includes(type as MediaEvent['type']), `${type} in ${types.join(',')}`);
    }
    const closedSend = streamed.find(
      (e) => e.type === 'transport_closed' && e.transport_id === send.id,
    );
    assert.ok(closedSend?.type === 'transport_closed' && closedSend.peer_id === '16');
  });

  void it('closes a router it did not create by looking it up by room', async () => {
    await call(server, 'POST', '/internal/v1/routers', { room_code: '222-000-222' });
    const routers = (await stats()).routers;
    await media.closeRouter('222-000-222');
    assert.equal((await stats()).routers, routers - 1);
  });

  void it('maps refusals: 404 unknown ids, 400 bad parameters, media server error on a bad token', async () => {
    const nf = await media.createTransport('999-999-999', 'send').catch((e: unknown) => e);
    assert.ok(isMediaResourceNotFound(nf), String(nf));
    await media.createRouter('333-000-333');
    const t = await media.createTransport('333-000-333', 'send');
    const bad = await media.createProducer(t.id, 'audio', { codecs: [] }).catch((e: unknown) => e);
    assert.ok(bad instanceof AppError && bad.kind === 'validation', String(bad));
    const wrongToken = new HttpMediaOrchestrator({
      baseUrl: server.url,
      internalToken: 'not-the-token',
      timeoutMs: 2_000,
      closeRetry: 0,
    });
    try {
      assert.ok(
        isMediaServerError(await wrongToken.createRouter('444-000-444').catch((e: unknown) => e)),
      );
    } finally {
      wrongToken.close();
    }
    await media.closeRouter('333-000-333');
  });

  void it('sends app data, lists producers, and streams producer_rtp_started with it', async () => {
    const code = '835-000-777';
    await media.createRouter(code);
    const plain = await plainSendTransport(server, code, '42');
    const appData = { user_id: '42', mic_session_id: 'ms-7', room_kind: 'voice_room' };
    const ssrc = 0x5eed77;
    const producerId = await media.createProducer(
      plain.id,
      'audio',
      opusLevelRtpParameters(ssrc),
      appData,
    );
    assert.deepEqual(await media.listProducers(code), [
      { producerId, kind: 'audio', paused: false, peerId: '42', appData },
    ]);
    const sender = new RtpSender(plain.port, ssrc);
    try {
      await sender.send(5);
      const started = await waitFor(
        () =>
          streamed.find((e) => e.type === 'producer_rtp_started' && e.producer_id === producerId),
        'producer_rtp_started on the stream',
      );
      assert.ok(started.type === 'producer_rtp_started');
      assert.deepEqual(
        [started.room_code, started.peer_id, started.transport_id, started.kind, started.app_data],
        [code, '42', plain.id, 'audio', appData],
      );
    } finally {
      sender.close();
    }
    const refused = await media
      .createProducer(plain.id, 'audio', opusLevelRtpParameters(ssrc + 1), { UserId: '42' })
      .catch((e: unknown) => e);
    assert.ok(refused instanceof AppError && refused.kind === 'validation', String(refused));
    assert.match(refused.message, /app_data\.UserId/);

    await media.closeProducer(producerId);
    const closed = await waitFor(
      () => streamed.find((e) => e.type === 'producer_closed' && e.producer_id === producerId),
      'producer_closed on the stream',
    );
    assert.ok(closed.type === 'producer_closed');
    assert.deepEqual(closed.app_data, appData);
    assert.deepEqual(await media.listProducers(code), []);
    await media.closeRouter(code);
    const gone = await media.listProducers(code).catch((e: unknown) => e);
    assert.ok(isMediaResourceNotFound(gone), String(gone));
  });

  void it('resumes the event stream after a drop without losing events', async () => {
    const seen = streamed.length;
    // Dropping every open stream makes the client reconnect with Last-Event-ID.
    const resumed: MediaEvent[] = [];
    const second = new MediaEventStream(
      { baseUrl: server.url, internalToken: TEST_TOKEN, reconnectMs: 50 },
      (e) => resumed.push(e),
    );
    await second.ready;
    server.http.server.closeAllConnections();
    // Let both ends see the sockets close before the next request.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await media.createRouter('555-000-555');
    await media.closeRouter('555-000-555');
    await waitFor(
      () => (resumed.some((e) => e.type === 'router_closed') ? true : undefined),
      'replayed router_closed',
    );
    second.close();
    const seqs = resumed.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...new Set(seqs)].sort((a, b) => a - b),
      'in order, no duplicates',
    );
    await waitFor(() => (streamed.length > seen ? true : undefined), 'first stream resumed too');
  });
});
