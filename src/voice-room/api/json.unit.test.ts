/**
 * The voice room's JSON (./json.ts): user ids as numbers, and a GetRoom answer that came over
 * unary gRPC (zero values for none) turned back into the declared reply, nulls included.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Room } from './replies.js';
import { roomFromGrpc, withJsonUserIds } from './json.js';

const viaGrpc = {
  app_code: 'default',
  room_id: 'r1',
  status: 'active',
  room_version: 7,
  owner_user_id: '1001',
  title: 'hi',
  created_at_ms: 1_700_000_000_000,
  closed_at_ms: 0,
  admins: ['1002'],
  banned: [],
  online_count: 2,
  members: [
    { user_id: '1001', joined_at_ms: 1, last_seen_at_ms: 2 },
    { user_id: '1002', joined_at_ms: 1, last_seen_at_ms: 2 },
  ],
  seats: [
    {
      seat_index: 0,
      state: 'publishing',
      user_id: '1002',
      mic_session_id: 'ms-5',
      publish_deadline_ms: 0,
    },
    { seat_index: 1, state: 'idle', user_id: '', mic_session_id: '', publish_deadline_ms: 0 },
  ],
};

describe('voice-room JSON', () => {
  it('turns a GetRoom answer of unary gRPC into the declared reply', () => {
    const room = Room.parse(roomFromGrpc(viaGrpc));
    assert.equal(room.owner_user_id, 1001);
    assert.equal(room.closed_at_ms, null);
    assert.deepEqual(room.admins, [1002]);
    assert.deepEqual(
      room.members.map((m) => m.user_id),
      [1001, 1002],
    );
    assert.deepEqual(room.seats[0], {
      seat_index: 0,
      state: 'publishing',
      user_id: 1002,
      mic_session_id: 'ms-5',
      publish_deadline_ms: null,
    });
    assert.deepEqual(room.seats[1], {
      seat_index: 1,
      state: 'idle',
      user_id: null,
      mic_session_id: null,
      publish_deadline_ms: null,
    });
  });

  it('keeps an answer already in JSON as it is, and leaves a bad id for the reply to refuse', () => {
    const json = Room.parse(roomFromGrpc(viaGrpc));
    assert.deepEqual(Room.parse(roomFromGrpc(json)), json);
    const bad = roomFromGrpc({ ...viaGrpc, owner_user_id: 'alice' });
    assert.equal(Room.safeParse(bad).success, false);
  });

  it("gives an event's user ids as numbers, and nothing else changes", () => {
    assert.deepEqual(
      withJsonUserIds({
        sender_user_id: '7',
        receiver_user_ids: ['8', '9'],
        gift_id: '10',
        count: 2,
      }),
      { sender_user_id: 7, receiver_user_ids: [8, 9], gift_id: '10', count: 2 },
    );
  });
});
