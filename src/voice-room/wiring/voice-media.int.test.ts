/**
 * Voice rooms' audio on one node (embedded SQLite and media server), through REST and
 * `/ws` only: the seat holder alone may produce, audio only, and its producer carries the
 * seat's mic session; a media event of that session makes the seat `publishing`, one of an
 * older session touches nothing; MicDown closes the producer on the media server; a
 * producer no seat session covers is closed by the periodic check.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import type { TestClient } from '../../edge/ws/testing/ws-client.js';
import { mediaSkipReason, opusRtpParameters } from '../../media-server/testing/harness.js';
import type { MediaEventBody } from '../../media-server/events.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import type { RoomsNode } from '../../main/node.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

describe('voice rooms with audio through the media server', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;
  let node: RoomsNode;
  let api: MeetingClient;

  before(async () => {
    started = await startMeetingNode(['anna', 'bert', 'carl']);
    ({ node, api } = started);
  });
  after(async () => {
    await started?.close();
  });

  const ok = (ack: { code: number; message?: string; data: unknown }) => {
    assert.equal(ack.code, 0, ack.message);
    return ack.data as Record<string, unknown>;
  };
  const post = async (who: string, path: string, body: object = {}) => {
    const res = await api.call('POST', `/voice/rooms${path}`, { as: who, body });
    assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };
  const seatZero = async (roomId: string) => {
    const res = await api.call('GET', `/voice/rooms/${roomId}`, { as: 'anna' });
    return (res.body.data.seats as { state: string; mic_session_id: string | null }[])[0]!;
  };
  const joined = async (who: string, roomId: string): Promise<TestClient> => {
    const socket = await started!.socket(who);
    ok(await socket.request('room.subscribe', { room_id: roomId }));
    const media = ok(await socket.request('voice.media.join', { room_id: roomId }));
    assert.equal(typeof media.router_id, 'string');
    assert.ok(Array.isArray((media.rtp_capabilities as { codecs: unknown[] }).codecs));
    return socket;
  };
  const sendTransport = async (socket: TestClient, roomId: string) =>
    ok(await socket.request('voice.transport.create', { room_id: roomId, direction: 'send' }))
      .id as string;
  const produce = (socket: TestClient, roomId: string, transportId: string, kind = 'audio') =>
    socket.request('voice.produce.start', {
      room_id: roomId,
      transport_id: transportId,
      kind,
      rtp_parameters: opusRtpParameters(Math.floor(Math.random() * 1e9)),
    });
  const producersOf = (roomId: string) =>
    node.media.orchestrator!.listProducers(
      mediaRoomOf({ appCode: 'default', roomId }, 'voice_room'),
    );
  const publish = (body: MediaEventBody) => node.media.server!.events.publish(body);
  /** Polls `check` until it holds (5 s at most). */
  const eventually = async (what: string, check: () => Promise<boolean> | boolean) => {
    for (let i = 0; i < 250; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.fail(`never: ${what}`);
  };

  it('only the seat holder produces audio; media events drive the seat; MicDown closes it', async () => {
    const { room_id: roomId } = (await post('anna', '', { title: '声音房' })) as {
      room_id: string;
    };
    await post('anna', `/${roomId}/join`);
    await post('bert', `/${roomId}/join`);
    await post('anna', `/${roomId}/mic/up`, { seat_index: 0 });
    const anna = await joined('anna', roomId);
    const bert = await joined('bert', roomId);

    // The audience may not produce; the seat holder only audio.
    const bertSend = await sendTransport(bert, roomId);
    const refused = await produce(bert, roomId, bertSend);
    assert.deepEqual([refused.code, refused.reason], [-1, 'NOT_ON_SEAT']);
    const annaSend = await sendTransport(anna, roomId);
    const video = await produce(anna, roomId, annaSend, 'video');
    assert.deepEqual([video.code, video.reason], [-1, 'VOICE_AUDIO_ONLY']);
    assert.deepEqual(await producersOf(roomId), [], 'nothing was created by the refusals');

    const producerId = ok(await produce(anna, roomId, annaSend)).producer_id as string;
    const announced = await bert.waitFor(
      (f) => f.event === 'voice.producer.new' && f.data.producer_id === producerId,
    );
    assert.deepEqual(
      [announced.data.user_id, announced.data.closed, announced.data.kind],
      [api.ids.anna, false, 'audio'],
    );
    const session = (await seatZero(roomId)).mic_session_id!;
    const [listed] = await producersOf(roomId);
    assert.ok(listed);
    assert.deepEqual(listed.appData, {
      room_kind: 'voice_room',
      user_id: String(api.ids.anna),
      mic_session_id: session,
      source: 'microphone',
    });

    // The media server hears RTP: the seat turns publishing with no client confirm.
    const room = mediaRoomOf({ appCode: 'default', roomId }, 'voice_room');
    const scope = {
      room_code: room,
      router_id: 'r',
      peer_id: String(api.ids.anna),
      transport_id: annaSend,
      producer_id: producerId,
      kind: 'audio' as const,
      app_data: listed.appData,
    };
    assert.equal((await seatZero(roomId)).state, 'pending_publish');
    publish({ type: 'producer_rtp_started', ...scope });
    await eventually(
      'seat 0 publishing',
      async () => (await seatZero(roomId)).state === 'publishing',
    );

    // The media server's audio levels become a speakers frame (seat and volume).
    publish({
      type: 'audio_levels',
      room_code: room,
      router_id: 'r',
      volumes: [
        { producer_id: producerId, peer_id: scope.peer_id, app_data: listed.appData, volume: -30 },
        { producer_id: 'gone', peer_id: '9', app_data: {}, volume: -40 },
      ],
    });
    const speakers = await bert.waitFor((f) => f.event === 'voice.speakers');
    // Frames carry user ids as JSON numbers (the producer's app data keeps the decimal text).
    assert.deepEqual(speakers.data.speakers, [
      { user_id: api.ids.anna, seat_index: 0, volume: -30 },
    ]);
    publish({ type: 'silence', room_code: room, router_id: 'r' });
    await bert.waitFor(
      (f) => f.event === 'voice.speakers' && (f.data.speakers as unknown[]).length === 0,
    );

    // A late joiner's media join lists the live producer.
    const carlJoin = await post('carl', `/${roomId}/join`).then(() => started!.socket('carl'));
    ok(await carlJoin.request('room.subscribe', { room_id: roomId }));
    const carlMedia = ok(await carlJoin.request('voice.media.join', { room_id: roomId }));
    assert.deepEqual(carlMedia.producers, [
      { user_id: api.ids.anna, producer_id: producerId, kind: 'audio' },
    ]);

    // MicDown ends the session: the producer is closed on the media server and announced.
    await post('anna', `/${roomId}/mic/down`);
    await bert.waitFor(
      (f) =>
        f.event === 'voice.producer.new' &&
        f.data.producer_id === producerId &&
        f.data.closed === true,
    );
    assert.deepEqual(await producersOf(roomId), []);

    // A new session; a late stop of the old session's producer does not touch it.
    await post('anna', `/${roomId}/mic/up`, { seat_index: 0 });
    const fresh = await seatZero(roomId);
    assert.notEqual(fresh.mic_session_id, session);
    publish({ type: 'producer_paused', ...scope });
    publish({ type: 'transport_closed', ...scope, direction: 'recv', reason: 'closed' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(await seatZero(roomId), fresh, 'the new session is untouched');
  });

  it('a producer no current seat session covers is closed by the periodic check', async () => {
    const { room_id: roomId } = (await post('anna', '', { title: '检查' })) as { room_id: string };
    await post('anna', `/${roomId}/join`);
    await post('anna', `/${roomId}/mic/up`, { seat_index: 1 });
    const anna = await joined('anna', roomId);
    const send = await sendTransport(anna, roomId);
    ok(await produce(anna, roomId, send));
    // As if the owner died right after a MicDown commit: a producer of an ended session.
    const [live] = await producersOf(roomId);
    const stale = await node.media.orchestrator!.createProducer(
      send,
      'audio',
      { ...opusRtpParameters(424242), mid: '1' },
      { ...live!.appData, mic_session_id: 'ms-ended' },
    );
    assert.equal((await producersOf(roomId)).length, 2);
    assert.equal(await node.voiceMedia.signalling.checkAllRooms(), 1);
    const left = await producersOf(roomId);
    assert.deepEqual(
      left.map((p) => p.producerId),
      [live!.producerId],
      'only the current session’s producer stays',
    );
    assert.ok(!left.some((p) => p.producerId === stale));
    // The room closes: every producer and the router go.
    await post('anna', `/${roomId}/close`);
    const name = mediaRoomOf({ appCode: 'default', roomId }, 'voice_room');
    await eventually(
      'the router closed',
      () => !node.media.server!.registry.roomCodes.includes(name),
    );
  });

  it('one member’s transports in a room are capped (voice.transport.create past 4 is refused)', async () => {
    const { room_id: roomId } = (await post('bert', '', { title: '上限' })) as { room_id: string };
    await post('bert', `/${roomId}/join`);
    const socket = await joined('bert', roomId);
    const acks = await Promise.all(
      Array.from({ length: 9 }, () =>
        socket.request('voice.transport.create', { room_id: roomId, direction: 'recv' }),
      ),
    );
    assert.equal(acks.filter((a) => a.code === 0).length, 6);
    for (const refused of acks.filter((a) => a.code !== 0)) {
      assert.deepEqual(
        [refused.message, refused.reason],
        [
          '媒体资源已达上限：每人在一个房间最多 6 个 transport，请先关闭不再使用的',
          'MEDIA_USER_LIMIT',
        ],
      );
    }
  });
});
