/**
 * The voice room's live frames for what CloseRoom commits: one `voice.mic.released` per mic
 * session it ends, then `voice.room.closed`, as members (and webhooks, from the same outbox
 * envelopes) see them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDomainError } from '../../shared/errors.js';
import { voiceRoomDomain } from '../domain/domain.js';
import {
  activeRoom,
  decide,
  fold,
  locked,
  onSeat,
  publishingOnSeat,
  settings,
} from '../domain/testing/given-when-then.js';
import type { RoomEventEnvelope } from '../../cell/envelope.js';
import { voiceRoomFrames } from './voice-frames.js';

describe('voice-room frames', () => {
  it('CloseRoom: a voice.mic.released frame per occupied seat, then voice.room.closed', () => {
    const domain = voiceRoomDomain(settings);
    // User ids as the API takes them (decimal account ids): frames carry them as JSON numbers.
    const owner = '1000';
    const state = fold([
      ...activeRoom({ seats: 4, owner }),
      ...onSeat('1001', 0),
      locked(1),
      ...publishingOnSeat('1002', 3),
    ]);
    const events = decide(state, { type: 'CloseRoom', operator_user_id: owner });
    assert.ok(!isDomainError(events));
    const frames = events.flatMap((event, i) => {
      const out = domain.toOutbox!(event)!;
      const envelope: RoomEventEnvelope = {
        app_code: 'app',
        event_id: `e-${i}`,
        room_id: 'room-1',
        room_version: 7,
        type: out.type,
        occurred_at_ms: 0,
        data: out.data,
      };
      return voiceRoomFrames.toFrames(envelope);
    });
    assert.deepEqual(
      frames.map((f) => [f.to, f.event, f.data.user_id ?? null, f.data.reason ?? null]),
      [
        ['room', 'voice.mic.released', 1001, 'room_closed'],
        ['room', 'voice.mic.released', 1002, 'room_closed'],
        ['room', 'voice.room.closed', null, null],
      ],
    );
    assert.equal(frames[2]!.data.operator_user_id, 1000);
    assert.deepEqual(
      frames.slice(0, 2).map((f) => [f.data.seat_index, f.data.mic_session_id]),
      [
        [0, 'ms-1001'],
        [3, 'ms-1002'],
      ],
    );
  });

  it('a join or leave of the crowd is counted, not announced; the leaver is still told', () => {
    const envelope = (data: Record<string, unknown>, type: string): RoomEventEnvelope => ({
      app_code: 'app',
      event_id: 'e-1',
      room_id: 'room-1',
      room_version: 9,
      type,
      occurred_at_ms: 0,
      data,
    });
    const crowd = { in_crowd: true, online_count: 201, at_ms: 5 };
    const join = { type: 'UserJoined', user_id: '1003', ...crowd };
    assert.deepEqual(voiceRoomFrames.toFrames(envelope(join, 'UserJoined')), []);
    const leave = { type: 'UserLeft', user_id: '1003', ...crowd };
    assert.deepEqual(
      voiceRoomFrames.toFrames(envelope(leave, 'UserLeft')).map((f) => [f.to, f.event]),
      [['user', 'voice.left']],
    );
    const announced = { type: 'UserJoined', user_id: '1003', at_ms: 5 };
    assert.deepEqual(
      voiceRoomFrames.toFrames(envelope(announced, 'UserJoined')).map((f) => [f.to, f.event]),
      [['room', 'voice.member.joined']],
    );
  });
});
