/**
 * Screen sharing on one real node (embedded media server), through REST and `/ws` only:
 * a member's screen producer is announced with `source: "screen"` and the member state
 * shows who shares; a second sharer is refused; the host takes the share over (the old
 * sharer's screen producer closes); a closed share lets the next member share; a late
 * joiner hears the live screen with its source.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaSkipReason, vp8RtpParameters } from '../../media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';
import type { TestClient } from '../../edge/ws/testing/ws-client.js';

describe('screen sharing', { skip: mediaSkipReason() }, () => {
  let api: MeetingClient;
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['chair', 'ann', 'bob', 'late']);
    ({ api } = started);
  });
  after(async () => {
    await started?.close();
  });

  it('holds one share per meeting; the host takes it over; a closed one frees it', async () => {
    const post = (who: string, path: string) =>
      api.call('POST', `/meeting/rooms${path}`, { as: who, body: {} });
    const created = await api.call('POST', '/meeting/rooms', {
      as: 'chair',
      body: { title: '共享屏幕' },
    });
    const code = created.body.data.room.room_code as string;
    await post('ann', `/${code}/join`);
    await post('bob', `/${code}/join`);
    const ok = (ack: { code: number; message?: string; data: unknown }) => {
      assert.equal(ack.code, 0, ack.message);
      return ack.data as Record<string, string>;
    };
    const sockets = new Map<string, TestClient>();
    for (const who of ['chair', 'ann', 'bob']) {
      const socket = await started!.socket(who);
      ok(await socket.request('meeting.room.join', { room_code: code }));
      sockets.set(who, socket);
    }
    let ssrc = 8880000;
    const shareScreen = async (who: string) => {
      const socket = sockets.get(who)!;
      const send = ok(
        await socket.request('meeting.transport.create', { room_code: code, direction: 'send' }),
      ).id!;
      ssrc += 1;
      return socket.request('meeting.produce.start', {
        room_code: code,
        transport_id: send,
        kind: 'video',
        source: 'screen',
        rtp_parameters: { ...vp8RtpParameters(ssrc), mid: String(ssrc) },
      });
    };
    const bob = sockets.get('bob')!;

    const annScreen = ok(await shareScreen('ann')).producer_id!;
    const announced = await bob.waitFor(
      (f) => f.event === 'meeting.member.producer.new' && f.data.producer_id === annScreen,
    );
    assert.equal(announced.data.source, 'screen');
    const sharing = await bob.waitFor(
      (f) => f.event === 'meeting.member.state.changed' && f.data.screen_sharing === true,
    );
    assert.equal(sharing.data.user_id, api.ids.ann);

    const busy = await shareScreen('bob');
    assert.deepEqual([busy.code, busy.message], [-1, '其他成员正在共享屏幕']);

    // A late joiner hears the live screen with its source.
    await post('late', `/${code}/join`);
    const late = await started!.socket('late');
    ok(await late.request('meeting.room.join', { room_code: code }));
    const listed = await late.waitFor(
      (f) => f.event === 'meeting.member.producer.new' && f.data.producer_id === annScreen,
    );
    assert.equal(listed.data.source, 'screen');

    // The host takes it over: ann's screen closes, ann is no longer sharing.
    const chairScreen = ok(await shareScreen('chair')).producer_id!;
    await bob.waitFor(
      (f) =>
        f.event === 'meeting.member.producer.new' &&
        f.data.producer_id === annScreen &&
        f.data.closed === true,
    );
    const takenOver = await bob.waitFor(
      (f) =>
        f.event === 'meeting.member.state.changed' &&
        f.data.user_id === api.ids.ann &&
        f.data.screen_sharing === false,
    );
    assert.equal(takenOver.data.actor_id, api.ids.chair);

    // The host closes its screen: bob may share now.
    ok(
      await sockets
        .get('chair')!
        .request('meeting.producer.close', { room_code: code, producer_id: chairScreen }),
    );
    assert.equal((await shareScreen('bob')).code, 0, 'the share is free again');
  });
});
