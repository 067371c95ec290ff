/**
 * The meeting's media signalling from the outside, per meeting-api.md: transports,
 * producers, consumers on a real media server through the real hub; each event's ACK, the
 * broadcasts, ownership (nobody uses someone else's transport, producer or consumer), and
 * the media server's failures in the seed's words.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { MediaServer } from '../../media-server/server.js';
import {
  CLIENT_DTLS,
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
} from '../../media-server/testing/harness.js';
import type { Frame, TestClient } from '../../edge/ws/testing/ws-client.js';
import { mediaRoom, meetingCode, startStack, type Stack } from './testing/stack.js';

void describe('meeting signalling: media', { skip: mediaSkipReason() }, () => {
  let server: MediaServer;
  let stack: Stack;
  let code: string;
  let rtpCapabilities: Record<string, unknown>;

  before(async () => {
    server = await startTestMediaServer();
  });
  after(async () => {
    await server?.close();
  });
  beforeEach(async () => {
    stack = await startStack(server);
    code = meetingCode();
    stack.membership.add(code, '16', '17');
    rtpCapabilities = (await stack.media.createRouter(mediaRoom(code))).rtpCapabilities;
  });
  afterEach(async () => {
    await stack.close();
    await stack.media.closeRouter(mediaRoom(code)).catch(() => undefined);
  });

  const joined = async (userId: string) => {
    const client = await stack.connect(userId);
    const ack = await client.request('meeting.room.join', { room_code: code });
    assert.equal(ack.code, 0, ack.message);
    return client;
  };
  const ok = (ack: Frame) => {
    assert.equal(ack.code, 0, `${ack.event}: ${ack.message}`);
    return ack.data;
  };
  const refused = (ack: Frame, message: string, reason?: string) => {
    assert.deepEqual(
      [ack.code, ack.message, ...(reason ? [ack.reason] : [])],
      [-1, message, ...(reason ? [reason] : [])],
      ack.event,
    );
  };
  const transport = async (client: TestClient, direction: 'send' | 'recv') =>
    ok(await client.request('meeting.transport.create', { room_code: code, direction }))
      .id as string;
  const produce = async (client: TestClient, transportId: string) =>
    ok(
      await client.request('meeting.produce.start', {
        room_code: code,
        transport_id: transportId,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(),
      }),
    ).producer_id as string;

  void it('runs the seed’s flow: transports, connect, produce (announced), paused consumer, resume, close (announced)', async () => {
    const host = await joined('16');
    const member = await joined('17');
    const send = await host.request('meeting.transport.create', {
      room_code: code,
      direction: 'send',
    });
    const info = ok(send);
    assert.deepEqual(Object.keys(info).sort(), [
      'dtlsParameters',
      'iceCandidates',
      'iceParameters',
      'iceServers',
      'id',
    ]);
    assert.ok((info.iceCandidates as unknown[]).length > 0);
    assert.deepEqual(info.iceServers, [], 'no TURN configured');
    assert.equal(server.registry.transport(info.id as string).peerId, '16');
    assert.equal(server.registry.transport(info.id as string).direction, 'send');
    const connect = await host.request('meeting.transport.connect', {
      room_code: code,
      transport_id: info.id,
      dtls_parameters: CLIENT_DTLS,
    });
    assert.deepEqual(ok(connect), {});
    const producerId = await produce(host, info.id as string);
    const announced = await member.waitFor((f) => f.event === 'meeting.member.producer.new');
    assert.deepEqual(announced.data, {
      room_code: code,
      user_id: 16,
      producer_id: producerId,
      kind: 'audio',
      closed: false,
      // Beyond the seed: what the track carries (an audio track's default).
      source: 'microphone',
    });

    const recv = await transport(member, 'recv');
    const consumed = ok(
      await member.request('meeting.consume.start', {
        room_code: code,
        transport_id: recv,
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      }),
    );
    assert.deepEqual(Object.keys(consumed).sort(), ['id', 'kind', 'producerId', 'rtpParameters']);
    assert.deepEqual([consumed.producerId, consumed.kind], [producerId, 'audio']);
    const consumerId = consumed.id as string;
    assert.equal(server.registry.consumer(consumerId).consumer.paused, true, 'created paused');
    const resumed = await member.request('meeting.consume.resume', { consumer_id: consumerId });
    assert.deepEqual(ok(resumed), {});
    assert.equal(server.registry.consumer(consumerId).consumer.paused, false);

    const closeAck = await host.request('meeting.producer.close', {
      room_code: code,
      producer_id: producerId,
    });
    assert.deepEqual(ok(closeAck), {});
    const closed = await member.waitFor(
      (f) => f.event === 'meeting.member.producer.new' && f.data.closed === true,
    );
    assert.deepEqual(closed.data, {
      room_code: code,
      user_id: 16,
      producer_id: producerId,
      kind: 'audio',
      closed: true,
    });
    assert.throws(() => server.registry.producer(producerId));
    // Closing it again, or an id nobody here holds (the seed's 404 = success), is no error.
    ok(await host.request('meeting.producer.close', { room_code: code, producer_id: producerId }));
    ok(await host.request('meeting.producer.close', { room_code: code, producer_id: 'made-up' }));
    // meeting.consume.resume is not broadcast.
    assert.equal(host.frames.filter((f) => f.event.startsWith('meeting.consume')).length, 0);
  });

  void it('answers another member’s transport, producer or consumer as unknown (会议资源不存在 / already closed), and refuses the wrong direction', async () => {
    const host = await joined('16');
    const member = await joined('17');
    const hostSend = await transport(host, 'send');
    const hostRecv = await transport(host, 'recv');
    const producerId = await produce(host, hostSend);
    const memberSend = await transport(member, 'send');
    const memberRecv = await transport(member, 'recv');
    const consumerId = ok(
      await member.request('meeting.consume.start', {
        room_code: code,
        transport_id: memberRecv,
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      }),
    ).id as string;
    const before = server.registry.stats;

    refused(
      await member.request('meeting.produce.start', {
        room_code: code,
        transport_id: hostSend,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(33333333),
      }),
      '会议资源不存在',
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    refused(
      await member.request('meeting.transport.connect', {
        room_code: code,
        transport_id: hostSend,
        dtls_parameters: CLIENT_DTLS,
      }),
      '会议资源不存在',
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    refused(
      await member.request('meeting.consume.start', {
        room_code: code,
        transport_id: hostRecv,
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      }),
      '会议资源不存在',
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    refused(
      await member.request('meeting.consume.start', {
        room_code: code,
        transport_id: memberSend,
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      }),
      'meeting.consume.start 需要 recv 方向的 transport',
      'MEDIA_WRONG_DIRECTION',
    );
    refused(
      await member.request('meeting.produce.start', {
        room_code: code,
        transport_id: memberRecv,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(44444444),
      }),
      'meeting.produce.start 需要 send 方向的 transport',
    );
    // Someone else's consumer answers as an unknown one: the answer tells nothing about it.
    refused(
      await host.request('meeting.consume.resume', { consumer_id: consumerId }),
      '会议资源不存在',
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    refused(
      await host.request('meeting.consume.resume', { consumer_id: 'no-such-consumer' }),
      '会议资源不存在',
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    // Someone else's producer is, for the caller, already closed (as an unknown id): `{}`.
    assert.deepEqual(
      ok(
        await member.request('meeting.producer.close', {
          room_code: code,
          producer_id: producerId,
        }),
      ),
      {},
    );
    // Nothing was created, paused, resumed or closed by the refusals.
    assert.deepEqual(server.registry.stats, before);
    assert.equal(server.registry.consumer(consumerId).consumer.paused, true);
    assert.ok(server.registry.producer(producerId));
    // A producer of another meeting is not this meeting's to consume.
    const other = meetingCode();
    stack.membership.add(other, '18');
    await stack.media.createRouter(mediaRoom(other));
    const stranger = await stack.connect('18');
    ok(await stranger.request('meeting.room.join', { room_code: other }));
    const strangerSend = ok(
      await stranger.request('meeting.transport.create', { room_code: other, direction: 'send' }),
    ).id as string;
    const foreign = ok(
      await stranger.request('meeting.produce.start', {
        room_code: other,
        transport_id: strangerSend,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(55555555),
      }),
    ).producer_id as string;
    refused(
      await member.request('meeting.consume.start', {
        room_code: code,
        transport_id: memberRecv,
        producer_id: foreign,
        rtp_capabilities: rtpCapabilities,
      }),
      '会议资源不存在',
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    assert.equal(server.registry.stats.consumers, before.consumers);
    await stack.media.closeRouter(mediaRoom(other));
  });

  void it('every media event re-checks active participation and checks its payload', async () => {
    const host = await joined('16');
    const send = await transport(host, 'send');
    const producerId = await produce(host, send);
    const recv = await transport(host, 'recv');
    const consumerId = ok(
      await host.request('meeting.consume.start', {
        room_code: code,
        transport_id: recv,
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      }),
    ).id as string;
    const requests: [string, Record<string, unknown>][] = [
      ['meeting.transport.create', { room_code: code, direction: 'send' }],
      [
        'meeting.transport.connect',
        { room_code: code, transport_id: send, dtls_parameters: CLIENT_DTLS },
      ],
      [
        'meeting.produce.start',
        {
          room_code: code,
          transport_id: send,
          kind: 'audio',
          rtp_parameters: opusRtpParameters(7),
        },
      ],
      [
        'meeting.consume.start',
        {
          room_code: code,
          transport_id: recv,
          producer_id: producerId,
          rtp_capabilities: rtpCapabilities,
        },
      ],
      ['meeting.producer.close', { room_code: code, producer_id: producerId }],
      ['meeting.consume.resume', { consumer_id: consumerId }],
      ['meeting.room.leave', { room_code: code }],
    ];
    // The host left the meeting (REST): its socket can no longer act in it.
    stack.membership.meeting(code)!.active.delete('16');
    for (const [event, data] of requests) {
      refused(await host.request(event, data), '你当前未在会议中', 'NOT_IN_MEETING');
    }
    stack.membership.remove(code);
    for (const [event, data] of requests) {
      refused(await host.request(event, data), '会议不存在', 'MEETING_NOT_FOUND');
    }
    assert.ok(server.registry.producer(producerId), 'a refused close closed the producer');
    assert.equal(server.registry.consumer(consumerId).consumer.paused, true);

    stack.membership.add(code, '16');
    for (const [event, data] of [
      ['meeting.transport.create', { room_code: code, direction: 'both' }],
      ['meeting.transport.create', { room_code: code }],
      ['meeting.transport.connect', { room_code: code, transport_id: send, dtls_parameters: '{}' }],
      [
        'meeting.produce.start',
        { room_code: code, transport_id: send, kind: 'screen', rtp_parameters: {} },
      ],
      ['meeting.produce.start', { room_code: code, transport_id: [send], kind: 'audio' }],
      ['meeting.consume.start', { room_code: code, transport_id: recv, producer_id: producerId }],
      ['meeting.producer.close', { room_code: code, producer_id: 42 }],
      ['meeting.consume.resume', { consumer_id: null }],
      ['meeting.consume.resume', {}],
    ] as const) {
      const ack = await host.request(event, data);
      assert.equal(ack.code, -1, `${event} ${JSON.stringify(data)}`);
      assert.match(ack.message!, /^参数错误: /);
    }
  });

  void it('meeting.transport.create needs a meeting.room.join on the socket first', async () => {
    const client = await stack.connect('16');
    refused(
      await client.request('meeting.transport.create', { room_code: code, direction: 'send' }),
      '请先发送 meeting.room.join',
      'MEETING_NOT_JOINED',
    );
    assert.equal(server.registry.stats.transports, 0);
  });

  void it('answers the media server’s failures as the seed says', async () => {
    const host = await joined('16');
    const send = await transport(host, 'send');
    // The media server refuses the parameters: `mediaOrchestrator error: <detail>`.
    const bad = await host.request('meeting.produce.start', {
      room_code: code,
      transport_id: send,
      kind: 'audio',
      rtp_parameters: { codecs: [] },
    });
    assert.equal(bad.code, -1);
    assert.match(bad.message!, /^mediaOrchestrator error: .+/);
    assert.equal(bad.reason, 'MEDIA_ORCHESTRATOR_ERROR');
    // The meeting's router is gone on the media server: 会议资源不存在.
    await stack.media.closeRouter(mediaRoom(code));
    refused(
      await host.request('meeting.transport.create', { room_code: code, direction: 'recv' }),
      '会议资源不存在',
      'MEDIA_RESOURCE_NOT_FOUND',
    );
    // The media server refuses this node (wrong internal token): 会议媒体服务暂不可用.
    const other = await startStack(server, { internalToken: 'not-the-token' });
    try {
      other.membership.add(code, '16');
      const client = await other.connect('16');
      ok(await client.request('meeting.room.join', { room_code: code }));
      refused(
        await client.request('meeting.transport.create', { room_code: code, direction: 'send' }),
        '会议媒体服务暂不可用',
        'MEDIA_SERVER_ERROR',
      );
    } finally {
      await other.close();
    }
  });

  it('two apps’ meetings with the same room code have routers of their own', async () => {
    const routers = server.registry.stats.routers;
    stack.membership.addInApp('shop', code, '16');
    await stack.media.createRouter(mediaRoom(code, 'shop'));
    assert.equal(server.registry.stats.routers, routers + 1, 'a router per app');
    const here = await joined('16');
    const there = await stack.connect('16', 'shop');
    ok(await there.request('meeting.room.join', { room_code: code }));
    ok(await here.request('meeting.transport.create', { room_code: code, direction: 'send' }));
    ok(await there.request('meeting.transport.create', { room_code: code, direction: 'send' }));
    const transportsOf = async (appCode: string) =>
      (await server.registry.routerOfRoom(mediaRoom(code, appCode)).router.dump()).transportIds
        .length;
    assert.deepEqual([await transportsOf('default'), await transportsOf('shop')], [1, 1]);
    // Ending one app's meeting (its router closed) leaves the other's media alone.
    await stack.media.closeRouter(mediaRoom(code, 'shop'));
    assert.equal(await transportsOf('default'), 1);
  });
});
