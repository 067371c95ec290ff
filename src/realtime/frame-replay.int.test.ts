/**
 * `room.subscribe {since_event_id}` after a short drop: the answer carries the room's frames
 * committed since the client's last one, in order and chained from it, built exactly as the
 * live ones were; an unknown id (or a too long absence) answers "refetch"; a malformed one
 * is refused and follows nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Frame } from '../edge/ws/testing/ws-client.js';
import { replayFrames, type RoomFrameLog } from './frame-replay.js';
import { voiceRoomFrames } from '../voice-room/api/voice-frames.js';
import { startMeetingNode, type MeetingNode } from '../main/testing/meeting-node.js';

describe('room.subscribe replays what a client missed', () => {
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['anna', 'bert']);
  });
  after(async () => {
    await started?.close();
  });

  it('answers the frames since the last one seen, in order, chained; else refetch', async () => {
    const { api } = started!;
    const post = async (who: string, path: string, body: object = {}) => {
      const res = await api.call('POST', `/voice/rooms${path}`, { as: who, body });
      assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, unknown>;
    };
    const { room_id: roomId } = (await post('anna', '', { title: '回放' })) as { room_id: string };
    await post('anna', `/${roomId}/join`);
    await post('bert', `/${roomId}/join`);
    const isRoomFrame = (f: Frame) => f.event.startsWith('voice.') && !f.event.endsWith('.ack');

    // Bert follows live, sees a frame, and drops.
    const first = await started!.socket('bert');
    assert.equal((await first.request('room.subscribe', { room_id: roomId })).code, 0);
    await post('anna', `/${roomId}/mic/up`, { seat_index: 2 });
    const seen = await first.waitFor((f) => f.event === 'voice.mic.up');
    first.close();

    // While he is away: a mic change, a down, a lock.
    const live = await started!.socket('anna');
    assert.equal((await live.request('room.subscribe', { room_id: roomId })).code, 0);
    await post('anna', `/${roomId}/mic/change`, { seat_index: 3 });
    await post('anna', `/${roomId}/mic/down`);
    await post('anna', `/${roomId}/seats/lock`, { seat_index: 0, locked: true });
    const missed = await live.until(() => {
      const frames = live.frames.filter(isRoomFrame);
      return frames.length >= 3 ? frames : undefined;
    });

    const back = await started!.socket('bert');
    const ack = await back.request('room.subscribe', {
      room_id: roomId,
      since_event_id: seen.data.event_id,
    });
    assert.equal(ack.code, 0, ack.message);
    const replay = ack.data.replay as Frame[];
    assert.deepEqual(
      replay.map((f) => [f.event, f.data.event_id]),
      missed.map((f) => [f.event, f.data.event_id]),
      'every missed frame, in order, as it was sent live',
    );
    assert.deepEqual(
      replay,
      missed.map(({ seq: _s, ...f }) => f),
    );
    assert.equal(replay[0]?.data.prev_event_id, seen.data.event_id, 'chained from his frame');
    // The same from the room version he had.
    const byVersion = await back.request('room.subscribe', {
      room_id: roomId,
      since_version: seen.data.room_version,
    });
    assert.deepEqual(
      (byVersion.data.replay as Frame[]).map((f) => f.data.event_id),
      missed.map((f) => f.data.event_id),
    );
    for (const since_version of ['3', -1, 1.5]) {
      const refused = await back.request('room.subscribe', { room_id: roomId, since_version });
      assert.deepEqual([refused.code, refused.reason], [-1, 'BAD_REQUEST'], String(since_version));
    }

    // What he could not have: an unknown event, or another room's, answers refetch.
    for (const since of ['no-such-event', missed[0]!.data.event_id as string]) {
      const other = await back.request('room.subscribe', {
        room_id: since === 'no-such-event' ? roomId : 'another-room',
        since_event_id: since,
      });
      if (other.code === 0) assert.equal(other.data.refetch, true);
    }
    const bad = await back.request('room.subscribe', { room_id: roomId, since_event_id: 42 });
    assert.deepEqual([bad.code, bad.reason], [-1, 'BAD_REQUEST']);
  });

  it('answers refetch beyond the bound instead of a long replay', async () => {
    const envelope = (v: number) => ({
      app_code: 'a',
      event_id: `e-${v}`,
      room_id: 'r',
      room_version: v,
      type: 'MicSeatLockSet',
      occurred_at_ms: 0,
      data: { seat_index: 0, locked: true },
    });
    const log: RoomFrameLog = {
      after: (_key, _since, limit) =>
        Promise.resolve({
          kind: 'some_kind',
          anchor: { roomVersion: 1, eventId: 'e-1' },
          envelopes: [2, 3, 4].map(envelope).slice(0, limit),
        }),
    };
    // A kind without a mapper: one generic frame per envelope.
    const mappers = new Map([['voice_room', voiceRoomFrames]]);
    const key = { appCode: 'a', roomId: 'r' };
    const from = { eventId: 'e-1' };
    assert.deepEqual(await replayFrames(log, mappers, key, from, 2), { refetch: true });
    const within = await replayFrames(log, mappers, key, from, 3);
    assert.ok('replay' in within, JSON.stringify(within));
    assert.deepEqual(
      within.replay.map((f) => (f as { data: { prev_event_id: string } }).data.prev_event_id),
      ['e-1', 'e-2', 'e-3'],
    );
  });
});
