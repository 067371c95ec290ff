/**
 * 禁麦 on the built-in media server, through one node's REST and `/ws` (embedded SQLite and
 * media server): the owner mutes the seat of a member who publishes; the member keeps the
 * seat and its session, the media server pauses its producer (nothing of it is forwarded),
 * a new producer on the muted seat is refused (`SEAT_MUTED`), and unmuting resumes it; quick
 * mutes and unmutes never free the seat.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import { mediaSkipReason, opusRtpParameters, waitFor } from '../../media-server/testing/harness.js';
import type { MeetingClient } from '../../meeting/api/testing/meeting-client.js';
import type { RoomsNode } from '../../main/node.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';
import { produceSeatAudio } from './testing/seat-audio.js';

void describe('a muted seat on the built-in media server', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;
  let node: RoomsNode;
  let api: MeetingClient;

  before(async () => {
    started = await startMeetingNode(['anna', 'bert']);
    ({ node, api } = started);
  });
  after(async () => {
    await started?.close();
  });

  const post = async (who: string, path: string, body: object = {}) => {
    const res = await api.call('POST', `/voice/rooms${path}`, { as: who, body });
    assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, unknown>;
  };

  void it('pauses the holder’s producer, refuses a new one, and resumes it when unmuted', async () => {
    const { room_id: roomId } = (await post('anna', '', { title: '禁麦' })) as { room_id: string };
    await post('anna', `/${roomId}/join`);
    await post('bert', `/${roomId}/join`);
    const bert = await started!.socket('bert');
    assert.equal((await bert.request('room.subscribe', { room_id: roomId })).code, 0);
    assert.equal((await bert.request('voice.media.join', { room_id: roomId })).code, 0);
    await post('bert', `/${roomId}/mic/up`, { seat_index: 0 });
    const producerId = await produceSeatAudio(bert, roomId);
    const producer = () =>
      node.media
        .server!.registry.producersOfRoom(mediaRoomOf({ appCode: 'default', roomId }, 'voice_room'))
        .find((p) => p.producer.id === producerId)?.producer;

    await post('anna', `/${roomId}/seats/mute`, { seat_index: 0, muted: true });
    await waitFor(() => (producer()?.paused ? true : undefined), 'the producer paused');
    const room = await api.call('GET', `/voice/rooms/${roomId}`, { as: 'anna' });
    const seat = (room.body.data as { seats: { user_id: number; muted: boolean }[] }).seats[0]!;
    assert.deepEqual([seat.user_id, seat.muted], [api.ids.bert, true], 'bert keeps the seat');

    const send = (
      await bert.request('voice.transport.create', { room_id: roomId, direction: 'send' })
    ).data.id;
    const refused = await bert.request('voice.produce.start', {
      room_id: roomId,
      transport_id: send,
      kind: 'audio',
      rtp_parameters: opusRtpParameters(87654321),
    });
    assert.notEqual(refused.code, 0);
    assert.match(refused.message ?? '', /muted/);
    // A seat carries a microphone: a shared screen's sound is refused, muted or not.
    const screen = await bert.request('voice.produce.start', {
      room_id: roomId,
      transport_id: send,
      kind: 'audio',
      source: 'screen_audio',
      rtp_parameters: opusRtpParameters(87654322),
    });
    assert.deepEqual([screen.code, screen.message], [-1, 'voice rooms carry audio only']);

    await post('anna', `/${roomId}/seats/mute`, { seat_index: 0, muted: false });
    await waitFor(() => (producer() && !producer()!.paused ? true : undefined), 'resumed');
  });

  void it('a mute and an unmute back to back never free the seat', async () => {
    const { room_id: roomId } = (await post('anna', '', { title: '快速禁麦' })) as {
      room_id: string;
    };
    await post('anna', `/${roomId}/join`);
    await post('bert', `/${roomId}/join`);
    const bert = await started!.socket('bert');
    assert.equal((await bert.request('room.subscribe', { room_id: roomId })).code, 0);
    assert.equal((await bert.request('voice.media.join', { room_id: roomId })).code, 0);
    await post('bert', `/${roomId}/mic/up`, { seat_index: 0 });
    const producerId = await produceSeatAudio(bert, roomId);
    // The media server hears its RTP (reported here, the test's microphone sends none).
    const room = mediaRoomOf({ appCode: 'default', roomId }, 'voice_room');
    const live = node.media.server!.registry.producersOfRoom(room)[0]!;
    const { mic_session_id } = await seatZero(roomId);
    const report = (type: 'producer_rtp_started' | 'producer_paused', producer_id: string) =>
      node.media.server!.events.publish({
        type,
        room_code: room,
        router_id: live.transportEntry.routerEntry.router.id,
        peer_id: String(api.ids.bert),
        transport_id: live.transportEntry.transport.id,
        producer_id,
        kind: 'audio',
        app_data: { room_kind: 'voice_room', user_id: String(api.ids.bert), mic_session_id },
      });
    report('producer_rtp_started', producerId);
    await waitFor(
      async () => ((await seatZero(roomId)).state === 'publishing' ? true : undefined),
      'publishing',
    );
    const before = await seatZero(roomId);
    await post('anna', `/${roomId}/seats/mute`, { seat_index: 0, muted: true });
    await post('anna', `/${roomId}/seats/mute`, { seat_index: 0, muted: false });
    // The media server's report of the mute's pause, arriving after the unmute (its own
    // clock and path; as another producer's of the same session, so that no report already
    // decided stands in for it): a pause is no audio stop, the seat stays bert's.
    report('producer_paused', `${producerId}-late`);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const after = await seatZero(roomId);
    assert.deepEqual(
      [after.user_id, after.mic_session_id, after.state, after.muted],
      [api.ids.bert, before.mic_session_id, before.state, false],
    );
    const open = node.media
      .server!.registry.producersOfRoom(mediaRoomOf({ appCode: 'default', roomId }, 'voice_room'))
      .some((p) => p.producer.id === producerId && !p.producer.paused);
    assert.ok(open, 'the producer is open and not paused');
  });

  async function seatZero(roomId: string) {
    const room = await api.call('GET', `/voice/rooms/${roomId}`, { as: 'anna' });
    return (
      room.body.data as {
        seats: { user_id: number; mic_session_id: string; state: string; muted: boolean }[];
      }
    ).seats[0]!;
  }
});
