/**
 * Recordings through one real node's REST (embedded media server with FFmpeg): the host
 * starts and stops (others are refused), every page hears it, the list shows the
 * recording to the host and to whoever took part (after leaving too) and refuses others;
 * a second start while one runs changes nothing; the meeting's end stops it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

describe('meeting recordings', { skip: mediaSkipReason() }, () => {
  let api: MeetingClient;
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['host', 'guest', 'stranger']);
    ({ api } = started);
  });
  after(async () => {
    await started?.close();
  });

  it('is started and stopped by the host, and listed to those who took part', async () => {
    const post = (who: string, path: string) =>
      api.call('POST', `/meeting/rooms${path}`, { as: who, body: {} });
    const list = (who: string) => api.call('GET', `/meeting/rooms/${code}/recordings`, { as: who });
    const created = await api.call('POST', '/meeting/rooms', {
      as: 'host',
      body: { title: '录制' },
    });
    const code = created.body.data.room.room_code as string;
    await post('guest', `/${code}/join`);
    const guest = await started!.socket('guest');
    assert.equal((await guest.request('meeting.room.join', { room_code: code })).code, 0);

    const byGuest = await post('guest', `/${code}/recordings/start`);
    assert.deepEqual([byGuest.status, byGuest.body.message], [403, '仅主持人可操作']);
    const on = await post('host', `/${code}/recordings/start`);
    assert.equal(on.status, 200, JSON.stringify(on.body));
    assert.equal(on.body.data.room.settings, '{"recording":true}');
    const frame = await guest.waitFor((f) => f.event === 'meeting.recording.started');
    const recordingId = frame.data.recording_id as string;
    assert.equal((await post('host', `/${code}/recordings/start`)).status, 200, 'a no-op');

    const running = await list('guest');
    assert.equal(running.status, 200, JSON.stringify(running.body));
    assert.equal(running.body.data.list.length, 1);
    assert.equal(running.body.data.list[0].recording_id, recordingId);
    const stranger = await list('stranger');
    assert.deepEqual([stranger.status, stranger.body.message], [400, '你当前未在会议中']);

    await post('host', `/${code}/recordings/stop`);
    const stopped = await guest.waitFor((f) => f.event === 'meeting.recording.stopped');
    assert.deepEqual(
      [stopped.data.room_code, stopped.data.recording_id, stopped.data.reason],
      [code, recordingId, 'stopped'],
    );
    // The stop reaches the media server after the commit: the list follows.
    let recording: { status: string; duration_ms: number | null } | undefined;
    for (let i = 0; i < 50 && recording?.status !== 'complete'; i++) {
      recording = (await list('host')).body.data.list[0];
      if (recording?.status !== 'complete') await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(recording?.status, 'complete');
    assert.ok(recording.duration_ms! >= 0);

    // A second recording stops with the meeting; the guest who left still sees both.
    await post('host', `/${code}/recordings/start`);
    await post('guest', `/${code}/leave`);
    await post('host', `/${code}/end`);
    const both = await list('guest');
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assert.equal(both.body.data.list.length, 2);
    assert.notEqual(both.body.data.list[1].stopped_at, null, 'stopped with the meeting');
  });
});
