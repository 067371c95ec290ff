/**
 * The host's lock and mute-all on one real node, through the public API only: a locked
 * meeting refuses a newcomer's join (REST) while its members stay, the room's `settings`
 * show it, and unlocking lets them in; mute-all mutes the others (the seed's
 * `meeting.member.state.changed` with the host as `actor_id`), and with `allow_unmute:
 * false` a member's own unmute over `/ws` is refused until the host allows it; the media
 * server's dominant speaker reaches the followers as `meeting.active_speaker`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

describe('the host’s lock and mute-all', { skip: mediaSkipReason() }, () => {
  let api: MeetingClient;
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['host', 'guest', 'late', 'chair', 'member']);
    ({ api } = started);
  });
  after(async () => {
    await started?.close();
  });

  const post = (who: string, path: string, body: object = {}) =>
    api.call('POST', `/meeting/rooms${path}`, { as: who, body });

  it('locks out newcomers while the members stay, and unlocks', async () => {
    const created = await post('host', '', { title: '锁定' });
    const code = created.body.data.room.room_code as string;
    assert.equal((await post('guest', `/${code}/join`)).status, 200);
    const byGuest = await post('guest', `/${code}/lock`, { locked: true });
    assert.deepEqual([byGuest.status, byGuest.body.message], [403, '仅主持人可操作']);
    const locked = await post('host', `/${code}/lock`, { locked: true });
    assert.equal(locked.status, 200, JSON.stringify(locked.body));
    assert.equal(locked.body.data.room.settings, '{"locked":true}');
    const refused = await post('late', `/${code}/join`);
    assert.deepEqual([refused.status, refused.body.message], [403, '会议已锁定，暂不允许加入']);
    const room = await api.call('GET', `/meeting/rooms/${code}`, { as: 'guest' });
    assert.equal(room.body.data.room.settings, '{"locked":true}');
    assert.equal(room.body.data.room.online_count, 2, 'the members stay');
    const bad = await post('host', `/${code}/lock`, { locked: 'yes' });
    assert.equal(bad.status, 400);
    await post('host', `/${code}/lock`, { locked: false });
    assert.equal((await post('late', `/${code}/join`)).status, 200);
  });

  it('mutes everyone else; with allow_unmute false nobody unmutes themselves until allowed', async () => {
    const created = await post('chair', '', { title: '全员静音' });
    const code = created.body.data.room.room_code as string;
    await post('member', `/${code}/join`);
    const member = await started!.socket('member');
    assert.equal((await member.request('meeting.room.join', { room_code: code })).code, 0);
    const on = await member.request('meeting.member.state.changed', {
      room_code: code,
      audio_enabled: true,
    });
    assert.equal(on.code, 0, on.message);
    const muted = await post('chair', `/${code}/mute-all`, { allow_unmute: false });
    assert.equal(muted.status, 200, JSON.stringify(muted.body));
    assert.equal(muted.body.data.room.settings, '{"unmute_allowed":false}');
    const frame = await member.waitFor(
      (f) =>
        f.event === 'meeting.member.state.changed' &&
        f.data.user_id === api.ids.member &&
        f.data.audio_enabled === false,
    );
    assert.equal(frame.data.actor_id, api.ids.chair);
    await member.waitFor((f) => f.event === 'meeting.room.self_unmute' && f.data.allowed === false);
    const blocked = await member.request('meeting.member.state.changed', {
      room_code: code,
      audio_enabled: true,
    });
    assert.deepEqual([blocked.code, blocked.message], [-1, '主持人已禁止自行解除静音']);
    await post('chair', `/${code}/self-unmute`, { allowed: true });
    const again = await member.request('meeting.member.state.changed', {
      room_code: code,
      audio_enabled: true,
    });
    assert.equal(again.code, 0, again.message);

    // The media server's active-speaker observer names the chair's producer: the owner
    // tells the followers whose microphone it is.
    started!.node.media.server!.events.publish({
      type: 'dominant_speaker',
      room_code: mediaRoomOf({ appCode: 'default', roomId: code }, 'meeting'),
      router_id: 'r',
      producer_id: 'p',
      peer_id: String(api.ids.chair),
      app_data: {},
    });
    const speaker = await member.waitFor((f) => f.event === 'meeting.active_speaker');
    assert.deepEqual(speaker.data, { room_code: code, user_id: api.ids.chair });
  });
});
