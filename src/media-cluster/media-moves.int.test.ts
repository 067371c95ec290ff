/**
 * A room moves off a dead media server every time one dies under it, even back and forth
 * between the same servers: A → B → A → C, with the real meeting and voice-room cells (one
 * node on SQLite) and the failover's own movers. The directory is scripted: every server it
 * reports lost has the same boot (a server whose heartbeats stopped and resumed: the same
 * process), which is what used to make a later move repeat an earlier one's request id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CellKey } from '../cell/lease.js';
import { silentLogger } from '../cell/testing/harness.js';
import { meetingClient } from '../meeting/api/testing/meeting-client.js';
import { MediaFailover } from './media-failover.js';
import { mediaRoomOf, unreachableMediaServer, type MediaServers } from './media-servers.js';
import { roomMovers } from '../main/media-cluster.js';
import { startTestHttpApp, type TestHttpApp } from '../main/testing/http-app-harness.js';

const BOOT = 'boot-1';

void describe('media moves', () => {
  let app: TestHttpApp;
  /** Where the directory places rooms now. */
  let placeOn = 'media-a';
  // New meetings know their router already: no media server is called to create them.
  const known = {
    ...unreachableMediaServer(),
    resolveRouterInfo: () => ({ ok: true as const, routerId: 'r-1', rtpCapabilities: {} }),
  };
  const directory: MediaServers = {
    place: () => placeOn,
    ids: () => [],
    of: () => known,
    lostBoot: () => Promise.resolve(BOOT),
  };
  const c = meetingClient(() => app.http);
  let meeting: CellKey;
  let voiceRoom: CellKey;
  let hostId: string;

  before(async () => {
    app = await startTestHttpApp({}, { media: directory });
    await c.users(['host']);
    hostId = String(c.ids.host);
    const created = await c.call('POST', '/meeting/rooms', { as: 'host', body: { title: 'm' } });
    assert.equal(created.body.code, 0, created.body.message);
    meeting = { appCode: 'default', roomId: created.body.data.room.room_code as string };
    const room = await c.call('POST', '/voice/rooms', { as: 'host', body: { title: 'v' } });
    assert.equal(room.body.code, 0, room.body.message);
    voiceRoom = { appCode: 'default', roomId: room.body.data.room_id as string };
    const joined = await c.call('POST', `/voice/rooms/${voiceRoom.roomId}/join`, { as: 'host' });
    assert.equal(joined.body.code, 0, joined.body.message);
  });
  after(() => app?.close());

  const serversNow = async () => {
    const m = await app.meetings.api.call('MeetingMember', {
      app_code: 'default',
      room_code: meeting.roomId,
      caller_id: hostId,
    });
    const v = await app.voice.api.call('GetRoomMedia', {
      app_code: 'default',
      room_id: voiceRoom.roomId,
    });
    return [m.media_server, v.media_server];
  };

  /** `dead` stops beating with both rooms listed; the failover moves them to `to`. */
  const dies = (dead: string, to: string) => {
    placeOn = to;
    const failover = new MediaFailover({
      roomsOf: () =>
        Promise.resolve({
          boot: BOOT,
          rooms: [mediaRoomOf(meeting), mediaRoomOf(voiceRoom, 'voice_room')],
        }),
      forgetDead: () => Promise.resolve(),
      lostBoot: () => Promise.resolve(BOOT),
      place: () => placeOn,
      movers: roomMovers({ meetings: app.meetings.api, voice: app.voice.api }),
      logger: silentLogger,
    });
    return failover.moveRoomsOf(dead);
  };

  void it('moves A → B → A → C, each time, and a repeated notice moves nothing', async () => {
    assert.deepEqual((await serversNow())[0], 'media-a');
    assert.deepEqual(await dies('media-a', 'media-b'), { moved: 2, failed: 0 });
    assert.deepEqual(await serversNow(), ['media-b', 'media-b']);
    assert.deepEqual(await dies('media-b', 'media-a'), { moved: 2, failed: 0 });
    assert.deepEqual(await serversNow(), ['media-a', 'media-a']);
    // media-a dies again, in the same boot: the rooms leave it again.
    assert.deepEqual(await dies('media-a', 'media-c'), { moved: 2, failed: 0 });
    assert.deepEqual(await serversNow(), ['media-c', 'media-c']);
    // Another node's notice of that death, placing elsewhere: the rooms are no longer on
    // media-a, so nothing moves, and nothing fails.
    assert.deepEqual(await dies('media-a', 'media-b'), { moved: 2, failed: 0 });
    assert.deepEqual(await serversNow(), ['media-c', 'media-c']);
  });
});
