/**
 * The internal API's producer and consumer endpoints against real mediasoup workers: success
 * and error paths, paused consumers, and the close events with their reasons. (Token,
 * routers and transports: internal-api.int.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MediaEvent } from './events.js';
import type { MediaServer } from './server.js';
import {
  call,
  mediaSkipReason,
  opusRtpParameters,
  room,
  startTestMediaServer,
  vp8RtpParameters,
  waitFor,
  type InfoData,
  type RouterData,
  type TransportData,
} from './testing/harness.js';

void describe(
  'media server internal API: producers and consumers',
  { skip: mediaSkipReason() },
  () => {
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
      (await call<RouterData>(server, 'POST', '/internal/v1/routers', { room_code: code })).body
        .data;
    const newTransport = async (code: string, direction = 'send', peer_id = 'u1') => {
      const r = await call<TransportData>(server, 'POST', '/internal/v1/transports', {
        room_code: code,
        direction,
        peer_id,
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.data;
    };

    void it('creates, pauses, resumes and closes producers, reporting each step', async () => {
      const code = room();
      await newRouter(code);
      const t = await newTransport(code, 'send', 'alice');
      const body = { transport_id: t.id, kind: 'audio', rtp_parameters: opusRtpParameters() };
      const created = await call<{ id: string; kind: string }>(
        server,
        'POST',
        '/internal/v1/producers',
        body,
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.data.kind, 'audio');
      const id = created.body.data.id;

      const unsupported = opusRtpParameters(333);
      unsupported.codecs[0]!.mimeType = 'audio/NOPE';
      const badCases = [
        { ...body, kind: 'smell' },
        { ...body, rtp_parameters: { codecs: [] } },
        { ...body, rtp_parameters: unsupported },
      ];
      for (const bad of badCases) {
        const r = await call(server, 'POST', '/internal/v1/producers', bad);
        assert.equal(r.status, 400, JSON.stringify(r.body));
      }
      assert.equal(
        (await call(server, 'POST', '/internal/v1/producers', { ...body, transport_id: 'nope' }))
          .status,
        404,
      );

      const paused = await call<{ paused: boolean }>(
        server,
        'POST',
        `/internal/v1/producers/${id}/pause`,
      );
      assert.deepEqual([paused.status, paused.body.data.paused], [200, true]);
      const resumed = await call<{ paused: boolean }>(
        server,
        'POST',
        `/internal/v1/producers/${id}/resume`,
      );
      assert.deepEqual([resumed.status, resumed.body.data.paused], [200, false]);
      assert.equal((await call(server, 'GET', `/internal/v1/producers/${id}/stats`)).status, 200);
      assert.equal((await call(server, 'POST', `/internal/v1/producers/${id}/close`)).status, 200);
      for (const action of ['pause', 'resume', 'close']) {
        assert.equal(
          (await call(server, 'POST', `/internal/v1/producers/${id}/${action}`)).status,
          404,
          action,
        );
      }
      assert.equal((await call(server, 'GET', `/internal/v1/producers/${id}/stats`)).status, 404);
      // The speaker observer may also name this producer (dominant_speaker): not a step.
      const mine = events
        .filter((e) => 'producer_id' in e && e.producer_id === id && e.type.startsWith('producer_'))
        .map((e) => e.type);
      assert.deepEqual(mine, [
        'producer_created',
        'producer_paused',
        'producer_resumed',
        'producer_closed',
      ]);
      const closed = events.find((e) => e.type === 'producer_closed' && e.producer_id === id);
      assert.ok(
        closed?.type === 'producer_closed' &&
          closed.reason === 'closed' &&
          closed.peer_id === 'alice',
      );
    });

    void it('creates consumers paused, resumes and closes them, and follows their producer', async () => {
      const code = room();
      const router = await newRouter(code);
      const send = await newTransport(code, 'send', 'alice');
      const recv = await newTransport(code, 'recv', 'bob');
      const producer = await call<{ id: string }>(server, 'POST', '/internal/v1/producers', {
        transport_id: send.id,
        kind: 'video',
        rtp_parameters: vp8RtpParameters(),
      });
      const producerId = producer.body.data.id;
      const caps = router.rtp_capabilities;
      const consumer = await call<{
        id: string;
        producerId: string;
        kind: string;
        paused: boolean;
        rtpParameters: unknown;
      }>(server, 'POST', '/internal/v1/consumers', {
        transport_id: recv.id,
        producer_id: producerId,
        rtp_capabilities: caps,
      });
      assert.equal(consumer.status, 201, JSON.stringify(consumer.body));
      const c = consumer.body.data;
      assert.deepEqual([c.producerId, c.kind, c.paused], [producerId, 'video', true]);
      assert.ok(c.rtpParameters);

      assert.equal(
        (
          await call(server, 'POST', '/internal/v1/consumers', {
            transport_id: recv.id,
            producer_id: 'nope',
            rtp_capabilities: caps,
          })
        ).status,
        404,
      );
      assert.equal(
        (
          await call(server, 'POST', '/internal/v1/consumers', {
            transport_id: 'nope',
            producer_id: producerId,
            rtp_capabilities: caps,
          })
        ).status,
        404,
      );
      const incompatible = await call(server, 'POST', '/internal/v1/consumers', {
        transport_id: recv.id,
        producer_id: producerId,
        rtp_capabilities: { codecs: [] },
      });
      assert.deepEqual([incompatible.status, incompatible.body.reason], [400, 'CANNOT_CONSUME']);
      // A producer of another room's router, with the right capabilities.
      const elsewhere = room();
      await newRouter(elsewhere);
      const otherSend = await newTransport(elsewhere, 'send', 'carol');
      const otherProducer = await call<{ id: string }>(server, 'POST', '/internal/v1/producers', {
        transport_id: otherSend.id,
        kind: 'video',
        rtp_parameters: vp8RtpParameters(),
      });
      const acrossRooms = await call(server, 'POST', '/internal/v1/consumers', {
        transport_id: recv.id,
        producer_id: otherProducer.body.data.id,
        rtp_capabilities: caps,
      });
      assert.deepEqual([acrossRooms.status, acrossRooms.body.reason], [400, 'CANNOT_CONSUME']);
      // Capabilities with no codec of the (VP8) producer, and a codec that mediasoup rejects.
      const audioOnly = {
        codecs: [{ kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 }],
      };
      for (const rtp_capabilities of [
        audioOnly,
        { codecs: [{ kind: 'video', mimeType: 'VP8', clockRate: 90000 }] },
      ]) {
        const refused = await call(server, 'POST', '/internal/v1/consumers', {
          transport_id: recv.id,
          producer_id: producerId,
          rtp_capabilities,
        });
        assert.deepEqual(
          [refused.status, refused.body.reason],
          [400, 'CANNOT_CONSUME'],
          JSON.stringify(rtp_capabilities),
        );
      }
      assert.equal(
        (await call(server, 'POST', '/internal/v1/consumers', { transport_id: recv.id })).status,
        400,
      );

      const resumed = await call<{ paused: boolean }>(
        server,
        'POST',
        `/internal/v1/consumers/${c.id}/resume`,
      );
      assert.deepEqual([resumed.status, resumed.body.data.paused], [200, false]);
      assert.equal((await call(server, 'POST', '/internal/v1/consumers/nope/resume')).status, 404);
      assert.equal((await call(server, 'GET', `/internal/v1/consumers/${c.id}/stats`)).status, 200);
      assert.equal(
        (await call(server, 'POST', `/internal/v1/consumers/${c.id}/close`)).status,
        200,
      );
      assert.equal(
        (await call(server, 'POST', `/internal/v1/consumers/${c.id}/close`)).status,
        404,
      );
      assert.equal(
        (await call(server, 'POST', `/internal/v1/consumers/${c.id}/resume`)).status,
        404,
      );

      // A consumer goes away with its producer, and says so.
      const second = await call<{ id: string }>(server, 'POST', '/internal/v1/consumers', {
        transport_id: recv.id,
        producer_id: producerId,
        rtp_capabilities: caps,
      });
      await call(server, 'POST', `/internal/v1/producers/${producerId}/close`);
      const gone = await waitFor(
        () =>
          events.find((e) => e.type === 'consumer_closed' && e.consumer_id === second.body.data.id),
        'consumer_closed',
      );
      assert.ok(
        gone.type === 'consumer_closed' &&
          gone.reason === 'producer_closed' &&
          gone.peer_id === 'bob',
      );
      assert.equal(
        (await call(server, 'POST', `/internal/v1/consumers/${second.body.data.id}/resume`)).status,
        404,
      );
    });

    void it('closing a router closes its transports and producers, and reports why', async () => {
      const code = room();
      const router = await newRouter(code);
      const t = await newTransport(code, 'send', 'carol');
      const p = await call<{ id: string }>(server, 'POST', '/internal/v1/producers', {
        transport_id: t.id,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(4444),
      });
      const start = (await info()).stats;
      await call(server, 'POST', `/internal/v1/routers/${router.router_id}/close`);
      const after = (await info()).stats;
      assert.deepEqual(
        [after.routers, after.transports, after.producers],
        [start.routers - 1, start.transports - 1, start.producers - 1],
      );
      const tc = events.find((e) => e.type === 'transport_closed' && e.transport_id === t.id);
      assert.ok(tc?.type === 'transport_closed' && tc.reason === 'router_closed');
      const pc = events.find(
        (e) => e.type === 'producer_closed' && e.producer_id === p.body.data.id,
      );
      assert.ok(
        pc?.type === 'producer_closed' &&
          pc.reason === 'transport_closed' &&
          pc.peer_id === 'carol',
      );
      assert.equal(
        (await call(server, 'POST', `/internal/v1/transports/${t.id}/close`)).status,
        404,
      );
    });
  },
);
