/**
 * A producer's `app_data`, the room's producer listing and `producer_rtp_started`, against
 * real mediasoup workers fed plain RTP from this process: app data is refused unless small,
 * flat and made of strings; once taken it is in every event about the producer, in the
 * speaker entries and in the listing; RTP starting is reported once, after the first packet.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MediaEvent } from './events.js';
import type { MediaServer } from './server.js';
import {
  call,
  mediaSkipReason,
  opusRtpParameters,
  room,
  startTestMediaServer,
  waitFor,
  type InfoData,
  type TransportData,
} from './testing/harness.js';
import { opusLevelRtpParameters, plainSendTransport, RtpSender } from './testing/plain-rtp.js';

interface ListedProducer {
  producer_id: string;
  kind: string;
  paused: boolean;
  peer_id: string | null;
  app_data: Record<string, string>;
}

/** Long enough for a packet to reach the worker and its notification to come back, many times. */
const QUIET_WINDOW_MS = 1_500;

void describe(
  'media server: producer app data, listing, RTP started',
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

    const newRoom = async () => {
      const code = room();
      assert.equal(
        (await call(server, 'POST', '/internal/v1/routers', { room_code: code })).status,
        201,
      );
      return code;
    };
    const webrtcTransport = async (code: string, peer_id: string) => {
      const r = await call<TransportData>(server, 'POST', '/internal/v1/transports', {
        room_code: code,
        direction: 'send',
        peer_id,
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.data.id;
    };
    const produce = async (body: Record<string, unknown>) => {
      const r = await call<{ id: string }>(server, 'POST', '/internal/v1/producers', body);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.data.id;
    };
    const listing = async (code: string) => {
      const r = await call<{ producers: ListedProducer[] }>(
        server,
        'GET',
        `/internal/v1/rooms/${code}/producers`,
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data.producers;
    };
    const eventsOf = (producerId: string) =>
      events.filter((e) => 'producer_id' in e && e.producer_id === producerId);

    void it('carries app_data into the producer events and the room listing', async () => {
      const code = await newRoom();
      const other = await newRoom();
      const transport = await webrtcTransport(code, '42');
      const app_data = { user_id: '42', mic_session_id: 'ms-1', room_kind: 'voice_room' };
      const withData = await produce({
        transport_id: transport,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(1001),
        app_data,
      });
      const without = await produce({
        transport_id: transport,
        kind: 'audio',
        rtp_parameters: { ...opusRtpParameters(1002), mid: '1' },
        paused: true,
      });
      await produce({
        transport_id: await webrtcTransport(other, '7'),
        kind: 'audio',
        rtp_parameters: opusRtpParameters(1003),
        app_data: { user_id: '7' },
      });

      assert.deepEqual(await listing(code), [
        { producer_id: withData, kind: 'audio', paused: false, peer_id: '42', app_data },
        { producer_id: without, kind: 'audio', paused: true, peer_id: '42', app_data: {} },
      ]);
      await call(server, 'POST', `/internal/v1/producers/${withData}/pause`);
      await call(server, 'POST', `/internal/v1/producers/${withData}/resume`);
      await call(server, 'POST', `/internal/v1/producers/${withData}/close`);
      assert.deepEqual(
        (await listing(code)).map((p) => p.producer_id),
        [without],
      );

      const mine = eventsOf(withData).filter((e) => e.type.startsWith('producer_'));
      assert.deepEqual(
        mine.map((e) => e.type),
        ['producer_created', 'producer_paused', 'producer_resumed', 'producer_closed'],
      );
      for (const event of mine) {
        assert.ok('app_data' in event, event.type);
        assert.deepEqual(event.app_data, app_data, event.type);
        assert.ok('peer_id' in event && event.peer_id === '42', event.type);
      }
      const plain = eventsOf(without).find((e) => e.type === 'producer_created');
      assert.ok(plain?.type === 'producer_created');
      assert.deepEqual(plain.app_data, {});

      const unknown = await call(server, 'GET', '/internal/v1/rooms/000-000-000/producers');
      assert.deepEqual([unknown.status, unknown.body.reason], [404, 'ROOM_ROUTER_NOT_FOUND']);
      const badCode = await call(server, 'GET', '/internal/v1/rooms/a%20b/producers');
      assert.equal(badCode.status, 400);
    });

    void it('refuses app_data that is not a small flat object of strings, creating nothing', async () => {
      const code = await newRoom();
      const transport = await webrtcTransport(code, '5');
      const nineKeys = Object.fromEntries('abcdefghi'.split('').map((k) => [k, 'v']));
      const cases: [unknown, RegExp][] = [
        [null, /app_data: must be an object/],
        ['user_id=5', /app_data: must be an object/],
        [['5'], /app_data: must be an object/],
        [{ user_id: 5 }, /app_data\.user_id: values must be strings/],
        [{ user_id: true }, /app_data\.user_id: values must be strings/],
        [{ user_id: null }, /app_data\.user_id: values must be strings/],
        [{ user: { id: '5' } }, /app_data\.user: values must be strings/],
        [{ user_id: ['5'] }, /app_data\.user_id: values must be strings/],
        [{ UserId: '5' }, /app_data\.UserId: keys must match \[a-z_\]\{1,32\}/],
        [{ 'user-id': '5' }, /keys/],
        [{ user_id1: '5' }, /keys/],
        [{ '': '5' }, /keys/],
        [{ ['k'.repeat(33)]: '5' }, /keys/],
        [{ user_id: 'x'.repeat(129) }, /at most 128 characters/],
        [nineKeys, /app_data: at most 8 keys/],
      ];
      const before = (await call<InfoData>(server, 'GET', '/internal/info')).body.data.stats;
      const seenBefore = events.length;
      for (const [app_data, message] of cases) {
        const r = await call(server, 'POST', '/internal/v1/producers', {
          transport_id: transport,
          kind: 'audio',
          rtp_parameters: opusRtpParameters(2001),
          app_data,
        });
        assert.equal(r.status, 400, `${JSON.stringify(app_data)}: ${JSON.stringify(r.body)}`);
        assert.match(r.body.message, message, JSON.stringify(app_data));
      }
      // An own `__proto__` key (which a parser could turn into a prototype) is refused too.
      const proto = await fetch(`${server.url}/internal/v1/producers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-token': server.internalToken },
        body: `{"transport_id":"${transport}","kind":"audio","rtp_parameters":${JSON.stringify(
          opusRtpParameters(2002),
        )},"app_data":{"__proto__":"x"}}`,
      });
      assert.equal(proto.status, 400);
      const after = (await call<InfoData>(server, 'GET', '/internal/info')).body.data.stats;
      assert.equal(after.producers, before.producers);
      assert.deepEqual(await listing(code), []);
      assert.ok(!events.slice(seenBefore).some((e) => e.type === 'producer_created'));
      // At the limits it is taken.
      const limits = Object.fromEntries(
        'abcdefgh'.split('').map((k) => [k.repeat(32), 'x'.repeat(128)]),
      );
      const id = await produce({
        transport_id: transport,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(2003),
        app_data: limits,
      });
      assert.deepEqual((await listing(code))[0], {
        producer_id: id,
        kind: 'audio',
        paused: false,
        peer_id: '5',
        app_data: limits,
      });
    });

    void it('reports producer_rtp_started once, after the first RTP, not again after pause/resume', async () => {
      const code = await newRoom();
      const plain = await plainSendTransport(server, code, '42');
      const ssrc = 0x5eed01;
      const app_data = { user_id: '42', mic_session_id: 'ms-rtp' };
      const id = await produce({
        transport_id: plain.id,
        kind: 'audio',
        rtp_parameters: opusLevelRtpParameters(ssrc),
        app_data,
      });
      const started = () => eventsOf(id).filter((e) => e.type === 'producer_rtp_started');

      await sleep(QUIET_WINDOW_MS);
      assert.deepEqual(started(), [], 'no RTP, no producer_rtp_started');

      const sender = new RtpSender(plain.port, ssrc);
      try {
        // About a second of speech: enough for the audio-level observer's 0.8 s report.
        await sender.send(50);
        const first = await waitFor(() => started()[0], 'producer_rtp_started');
        assert.deepEqual(
          { ...first, seq: 0, at_ms: 0 },
          {
            type: 'producer_rtp_started',
            room_code: code,
            router_id: (
              await call<{ router_id: string }>(server, 'GET', `/internal/v1/rooms/${code}/router`)
            ).body.data.router_id,
            peer_id: '42',
            transport_id: plain.id,
            producer_id: id,
            kind: 'audio',
            app_data,
            seq: 0,
            at_ms: 0,
          },
        );
        const created = eventsOf(id).find((e) => e.type === 'producer_created');
        assert.ok(created && created.seq < first.seq, 'after producer_created');

        const levels = await waitFor(
          () =>
            events.find(
              (e) => e.type === 'audio_levels' && e.volumes.some((v) => v.producer_id === id),
            ),
          'audio_levels naming the producer',
        );
        assert.ok(levels.type === 'audio_levels');
        assert.deepEqual(levels.volumes.find((v) => v.producer_id === id)?.app_data, app_data);
        const dominant = await waitFor(
          () => events.find((e) => e.type === 'dominant_speaker' && e.producer_id === id),
          'dominant_speaker naming the producer',
        );
        assert.ok(dominant.type === 'dominant_speaker');
        assert.deepEqual(dominant.app_data, app_data);

        await call(server, 'POST', `/internal/v1/producers/${id}/pause`);
        await sender.send(10);
        await call(server, 'POST', `/internal/v1/producers/${id}/resume`);
        await sender.send(25);
        // A steady stream's score rarely changes within a test: stand in for the worker's
        // later score notifications, which must not report the start again either.
        const { producer } = server.registry.producer(id);
        producer.emit('score', [{ encodingIdx: 0, ssrc, score: 7 }]);
        await sleep(QUIET_WINDOW_MS);
        assert.equal(started().length, 1, 'sent once per producer');
      } finally {
        sender.close();
      }
    });

    void it('reports RTP reaching a producer created paused, once', async () => {
      const code = await newRoom();
      const plain = await plainSendTransport(server, code, null);
      const ssrc = 0x5eed02;
      const id = await produce({
        transport_id: plain.id,
        kind: 'audio',
        rtp_parameters: opusLevelRtpParameters(ssrc),
        paused: true,
      });
      const sender = new RtpSender(plain.port, ssrc);
      try {
        await sender.send(5);
        const event = await waitFor(
          () => eventsOf(id).find((e) => e.type === 'producer_rtp_started'),
          'producer_rtp_started',
        );
        assert.ok(event.type === 'producer_rtp_started');
        assert.deepEqual([event.peer_id, event.app_data], [null, {}]);
        await call(server, 'POST', `/internal/v1/producers/${id}/resume`);
        await sender.send(5);
        await sleep(QUIET_WINDOW_MS / 2);
        assert.equal(eventsOf(id).filter((e) => e.type === 'producer_rtp_started').length, 1);
      } finally {
        sender.close();
      }
    });
  },
);
