/**
 * The voice room's JSON (./json.ts): the room's state keeps user ids in decimal text, the
 * declared replies and frames carry them as numbers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { roomView } from '../domain/view.js';
import { activeRoom, adminSet, fold, joined } from '../domain/testing/given-when-then.js';
import { Room } from './replies.js';
import { roomJson, withJsonUserIds } from './json.js';

describe('voice-room JSON', () => {
  it('answers a room with its user ids as numbers, and null where nobody is', () => {
    const state = fold([
      ...activeRoom({ owner: '1001', seats: 2 }),
      joined('1001'),
      joined('1002'),
      adminSet('1002'),
    ]);
    const room = Room.parse({ app_code: 'a', room_id: 'r', ...roomJson(roomView(state, 5)) });
    assert.equal(room.owner_user_id, 1001);
    assert.deepEqual(room.admins, [1002]);
    assert.deepEqual(
      room.members.map((m) => m.user_id),
      [1001, 1002],
    );
    assert.deepEqual(
      room.seats.map((s) => s.user_id),
      [null, null],
    );
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
