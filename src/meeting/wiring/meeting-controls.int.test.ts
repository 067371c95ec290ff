/**
 * The host's lock and mute-all on one real node, through the public API only: a locked
 * meeting refuses a newcomer's join (REST) while its members stay, the room's `settings`
 * show it, and unlocking lets them in; mute-all mutes the others (the seed's
 * `meeting.member.state.changed` with the host as `actor_id`), and with `allow_unmute:
 * false` a member's own unmute over `/ws` is refused until the host allows it; the media
 * server's dominant speaker reaches the followers as `meeting.active_speaker`. While a
 * member is kept muted, the media server pauses its audio producer and refuses a new one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import {
  mediaSkipReason,
  opusRtpParameters,
  vp8RtpParameters,
  waitFor,
} from '../../media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

describe('the host’s lock and mute-all', { skip: mediaSkipReason() }, () => {
  let api: MeetingClient;
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['host', 'guest', 'late', 'chair', 'member', 'lead', 'mic']);
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

  it('holds a kept-muted member’s audio on the media server until the host lets go', async () => {
    const created = await post('lead', '', { title: '媒体静音' });
    const code = created.body.data.room.room_code as string;
    await post('mic', `/${code}/join`);
    const mic = await started!.socket('mic');
    const lead = await started!.socket('lead');
    for (const socket of [mic, lead]) {
      assert.equal((await socket.request('meeting.room.join', { room_code: code })).code, 0);
    }
    const ok = (ack: { code: number; message?: string; data: unknown }) => {
      assert.equal(ack.code, 0, ack.message);
      return ack.data as Record<string, string>;
    };
    const send = ok(
      await mic.request('meeting.transport.create', { room_code: code, direction: 'send' }),
    ).id!;
    const produce = (kind: 'audio' | 'video', ssrc: number, source?: 'screen_audio') =>
      mic.request('meeting.produce.start', {
        room_code: code,
        transport_id: send,
        kind,
        ...(source ? { source } : {}),
        // A MID of its own per producer on the one transport.
        rtp_parameters: {
          ...(kind === 'audio' ? opusRtpParameters(ssrc) : vp8RtpParameters(ssrc)),
          mid: String(ssrc),
        },
      });
    const audioId = ok(await produce('audio', 5550001)).producer_id!;
    const paused = () =>
      started!.node.media
        .server!.registry.producersOfRoom(mediaRoomOf({ appCode: 'default', roomId: code }))
        .find((p) => p.producer.id === audioId)?.producer.paused;
    assert.equal(paused(), false);

    await post('lead', `/${code}/mute-all`, { allow_unmute: false });
    await waitFor(() => (paused() ? true : undefined), 'the held audio paused');
    const refused = await produce('audio', 5550002);
    assert.deepEqual([refused.code, refused.message], [-1, '主持人已禁止自行解除静音']);
    assert.equal((await produce('video', 5550003)).code, 0, 'video stays free');
    // A shared screen's sound is not the microphone: neither refused nor held.
    const screenAudio = ok(await produce('audio', 5550005, 'screen_audio')).producer_id!;

    // The host unmutes this one member: its audio flows again; muted again: held again.
    const change = (audio_enabled: boolean) =>
      lead.request('meeting.member.state.changed', {
        room_code: code,
        target_user_id: api.ids.mic,
        audio_enabled,
      });
    assert.equal((await change(true)).code, 0);
    await waitFor(() => (paused() === false ? true : undefined), 'resumed for the member');
    const fresh = await produce('audio', 5550004);
    assert.equal(fresh.code, 0, `unmuted: a new producer too (${fresh.message})`);
    assert.equal((await change(false)).code, 0);
    await waitFor(() => (paused() ? true : undefined), 'held again');
    const producers = started!.node.media.server!.registry.producersOfRoom(
      mediaRoomOf({ appCode: 'default', roomId: code }),
    );
    const screenSound = producers.find((p) => p.producer.id === screenAudio)?.producer;
    assert.equal(screenSound?.paused, false, 'the screen’s sound is not held');

    // The host allows self-unmute: nothing is held any more.
    await post('lead', `/${code}/self-unmute`, { allowed: true });
    await waitFor(() => (paused() === false ? true : undefined), 'let go');
  });
});
