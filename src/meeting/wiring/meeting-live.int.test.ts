/**
 * A meeting live, on one real node (embedded SQLite and media server), through the public
 * API only: REST for the meeting, `/ws` for its frames and signalling. What the seed's
 * clients see: the router in create and join (one per meeting), `meeting.member.joined`,
 * `meeting.chat`, `meeting.member.state.changed`, a kick (`meeting.member.kicked` to the
 * kicked user alone, `meeting.member.left` to the room, and no more frames for the kicked),
 * and the end (`meeting.room.ended`, the router closed on the media server).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import type { RoomsNode } from '../../main/node.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

describe('a meeting live over REST and /ws on one node', { skip: mediaSkipReason() }, () => {
  let node: RoomsNode;
  let api: MeetingClient;
  let started: MeetingNode | undefined;
  const socket = (who: string) => started!.socket(who);

  before(async () => {
    started = await startMeetingNode(['host', 'guest', 'third']);
    ({ node, api } = started);
  });
  after(async () => {
    await started?.close();
  });

  it('carries the seed broadcasts, ends follows with the presence and closes the router', async () => {
    const routers = () => node.media.server!.registry.stats.routers;
    const before = routers();
    const created = await api.call('POST', '/meeting/rooms', {
      as: 'host',
      body: { title: '直播' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const code = created.body.data.room.room_code as string;
    assert.equal(typeof created.body.data.router_id, 'string');
    assert.ok(Array.isArray(created.body.data.rtp_capabilities.codecs));
    assert.equal(routers(), before + 1, 'create made the meeting’s router');

    const host = await socket('host');
    assert.equal((await host.request('meeting.room.join', { room_code: code })).code, 0);
    // A user who is not a participant is refused and follows nothing.
    const third = await socket('third');
    const refused = await third.request('meeting.room.join', { room_code: code });
    assert.deepEqual([refused.code, refused.message], [-1, '你当前未在会议中']);

    const joined = await api.call('POST', `/meeting/rooms/${code}/join`, { as: 'guest', body: {} });
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.equal(joined.body.data.router_id, created.body.data.router_id, 'S5: one router');
    assert.equal(routers(), before + 1);
    const seen = await host
      .waitFor((f) => f.event === 'meeting.member.joined')
      .catch(() => assert.fail(`no member.joined: ${JSON.stringify(host.frames)}`));
    // The seed's participant object, exactly as the REST join answered it.
    assert.deepEqual(seen.data.participant, joined.body.data.participant);
    assert.equal((seen.data.participant as { room_id: number }).room_id, created.body.data.room.id);

    const guest = await socket('guest');
    assert.equal((await guest.request('meeting.room.join', { room_code: code })).code, 0);
    const chat = await api.call('POST', `/meeting/rooms/${code}/chats`, {
      as: 'host',
      body: { content: '大家好' },
    });
    assert.equal(chat.status, 201);
    const heard = await guest.waitFor((f) => f.event === 'meeting.chat');
    assert.deepEqual([heard.data.content, heard.data.user_id], ['大家好', api.ids.host]);
    // The seed: the payload is the answer's message object (numeric room_id included).
    for (const [field, value] of Object.entries(chat.body.data.message as object)) {
      assert.deepEqual(heard.data[field], value, `meeting.chat ${field}`);
    }

    const muted = await host.request('meeting.member.state.changed', {
      room_code: code,
      target_user_id: api.ids.guest,
      audio_enabled: false,
    });
    assert.equal(muted.code, 0, JSON.stringify(muted));
    const state = await guest.waitFor((f) => f.event === 'meeting.member.state.changed');
    assert.deepEqual(
      [state.data.user_id, state.data.audio_enabled, state.data.actor_id],
      [api.ids.guest, false, api.ids.host],
    );
    const notHost = await guest.request('meeting.member.state.changed', {
      room_code: code,
      target_user_id: api.ids.host,
      audio_enabled: false,
    });
    assert.deepEqual([notHost.code, notHost.message], [-1, '仅主持人可执行此操作']);

    const kicked = await api.call('POST', `/meeting/rooms/${code}/kick`, {
      as: 'host',
      body: { user_id: api.ids.guest },
    });
    assert.equal(kicked.status, 200, JSON.stringify(kicked.body));
    const told = await guest.waitFor((f) => f.event === 'meeting.member.kicked');
    assert.equal(told.data.room_code, code);
    const left = await host.waitFor((f) => f.event === 'meeting.member.left');
    assert.equal(left.data.user_id, api.ids.guest);
    assert.equal(host.events('meeting.member.kicked').length, 0, 'the kick is told to the kicked');

    await api.call('POST', `/meeting/rooms/${code}/chats`, {
      as: 'host',
      body: { content: '再见' },
    });
    await host.waitFor((f) => f.event === 'meeting.chat' && f.data.content === '再见');
    const ended = await api.call('POST', `/meeting/rooms/${code}/end`, { as: 'host', body: {} });
    assert.equal(ended.status, 200);
    const over = await host.waitFor((f) => f.event === 'meeting.room.ended');
    assert.equal(over.data.reason, 'host_ended');
    await host.until(() => routers() === before, 5_000);
    // The kicked guest heard nothing of the meeting after the kick.
    const after = guest.frames.slice(guest.frames.indexOf(told) + 1);
    assert.deepEqual(
      after.filter((f) => f.event.startsWith('meeting.') && !f.event.endsWith('.ack')),
      [],
    );
  });

  it('the janitor closes the routers of ended rooms their end did not close, nothing else', async () => {
    const registry = node.media.server!.registry;
    const orchestrator = node.media.orchestrator!;
    const open = async (title: string) => {
      const created = await api.call('POST', '/meeting/rooms', { as: 'third', body: { title } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return created.body.data.room.room_code as string;
    };
    const ended = await open('ended');
    assert.equal(
      (await api.call('POST', `/meeting/rooms/${ended}/end`, { as: 'third', body: {} })).status,
      200,
    );
    const endedRoom = mediaRoomOf({ appCode: 'default', roomId: ended });
    for (let i = 0; registry.roomCodes.includes(endedRoom) && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // The owner died before closing it: the router is still there.
    await orchestrator.createRouter(endedRoom);
    const live = await open('live');
    const liveRoom = mediaRoomOf({ appCode: 'default', roomId: live });
    const strangers = ['meeting:default:999-999-999', 'voice_room:default:r-7', 'other-room'];
    for (const name of strangers) await orchestrator.createRouter(name);
    // A closed voice room whose router outlived it, too.
    const voice = await api.call('POST', '/voice/rooms', { as: 'third', body: { title: 'v' } });
    const voiceId = voice.body.data.room_id as string;
    await api.call('POST', `/voice/rooms/${voiceId}/close`, { as: 'third', body: {} });
    const closedVoice = mediaRoomOf({ appCode: 'default', roomId: voiceId }, 'voice_room');
    await orchestrator.createRouter(closedVoice);

    assert.equal(await node.routerJanitor.sweepOnce(), 2);
    const rooms = registry.roomCodes;
    assert.ok(!rooms.includes(endedRoom), 'the ended meeting’s router is closed');
    assert.ok(!rooms.includes(closedVoice), 'the closed voice room’s router is closed');
    for (const name of [liveRoom, ...strangers]) assert.ok(rooms.includes(name), name);
    assert.equal(await node.routerJanitor.sweepOnce(), 0, 'nothing more to close');
    for (const name of strangers) await orchestrator.closeRouter(name);
    await api.call('POST', `/meeting/rooms/${live}/end`, { as: 'third', body: {} });
  });
});
