/**
 * Recordings: the host starts one at a time (numbered within the meeting, on the meeting's
 * media server), stops it, and a meeting that ends stops its recording; the room's
 * `settings` show one running.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CODE, given, HOST, meetingWith, NOW, T0 } from './testing/given-when-then.js';
import type { MeetingCommand, MeetingEvent } from './types.js';
import { meetingView } from './view.js';

const start = (operator_user_id = HOST): MeetingCommand => ({
  type: 'StartRecording',
  operator_user_id,
});
const stop = (operator_user_id = HOST): MeetingCommand => ({
  type: 'StopRecording',
  operator_user_id,
});
const id = (n: number) => `${CODE.replaceAll('-', '')}-${n}`;
const started = (n: number, at_ms = T0): MeetingEvent => ({
  type: 'RecordingStarted',
  recording_id: id(n),
  media_server: null,
  actor_id: HOST,
  at_ms,
});
const stopped = (
  n: number,
  reason: 'stopped' | 'meeting_ended' = 'stopped',
  actor_id: string | null = HOST,
): MeetingEvent => ({
  type: 'RecordingStopped',
  recording_id: id(n),
  media_server: null,
  reason,
  actor_id,
  at_ms: NOW,
});

describe('recordings', () => {
  it('starts one at a time, numbered; a start while one runs is nothing', () => {
    const state = given(meetingWith(['u-1']))
      .when(start())
      .then([started(1, NOW)]);
    assert.deepEqual(meetingView(state).settings, { recording: true });
    given(meetingWith(['u-1']), started(1))
      .when(start())
      .then([]);
    given(meetingWith(['u-1']), started(1), stopped(1))
      .when(start())
      .then([started(2, NOW)]);
  });

  it('is the host’s to start and stop; a stop with none running is nothing', () => {
    given(meetingWith(['u-1']))
      .when(start('u-1'))
      .thenError('HOST_ONLY');
    given(meetingWith(['u-1']), started(1))
      .when(stop('u-1'))
      .thenError('HOST_ONLY');
    const after = given(meetingWith(['u-1']), started(1))
      .when(stop())
      .then([stopped(1)]);
    assert.deepEqual(meetingView(after).settings, {});
    assert.equal(after.recordings?.[0]?.stopped_at_ms, NOW);
    given(meetingWith(['u-1']))
      .when(stop())
      .then([]);
  });

  it('stops with its meeting', () => {
    const ended = given(meetingWith([]), started(1)).when({
      type: 'EndMeeting',
      operator_user_id: HOST,
    }).result as MeetingEvent[];
    assert.deepEqual(
      ended.map((e) => e.type),
      ['MemberLeft', 'RecordingStopped', 'MeetingEnded'],
    );
    assert.deepEqual(ended[1], stopped(1, 'meeting_ended', null));
  });
});
