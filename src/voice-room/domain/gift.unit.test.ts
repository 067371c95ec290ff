/**
 * SendGift: only in active rooms, between present users, with validated receivers, count
 * and price. The price is charged in the commit transaction (adapter); the decider fixes it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  activeRoom,
  closed,
  given,
  joined,
  kicked,
  left,
  OWNER,
} from './testing/given-when-then.js';
import type { VoiceRoomCommand, VoiceRoomEvent } from './types.js';

type SendGift = Extract<VoiceRoomCommand, { type: 'SendGift' }>;

const gift = (overrides: Partial<SendGift> = {}): SendGift => ({
  type: 'SendGift',
  sender_user_id: 'u-1',
  receiver_user_ids: [OWNER],
  gift_id: 'rose',
  count: 2,
  unit_price: 10,
  ...overrides,
});

const sent = (command: SendGift): Extract<VoiceRoomEvent, { type: 'GiftSent' }> => ({
  type: 'GiftSent',
  sender_user_id: command.sender_user_id,
  receiver_user_ids: command.receiver_user_ids,
  gift_id: command.gift_id,
  count: command.count,
  unit_price: command.unit_price,
  total_price: command.unit_price * command.count * command.receiver_user_ids.length,
});

const USERS = Array.from({ length: 21 }, (_, i) => `u-r${i}`);
const room = [...activeRoom(), joined(OWNER), joined('u-1'), ...USERS.map((u) => joined(u))];

describe('SendGift', () => {
  it('sends to one receiver: total = unit price × count', () => {
    const state = given(room)
      .when(gift())
      .then([sent(gift())]);
    assert.deepEqual(state, given(room).state, 'a gift changes no room state');
    assert.deepEqual(given(room).when(gift()).result, [{ ...sent(gift()), total_price: 20 }]);
  });

  it('sends to several receivers: total = unit price × count × receivers', () => {
    const command = gift({ receiver_user_ids: [OWNER, 'u-r0', 'u-r1'], count: 3, unit_price: 7 });
    given(room)
      .when(command)
      .then([{ ...sent(command), total_price: 63 }]);
  });

  it('accepts the bounds: 20 receivers, count 9999, a free gift', () => {
    for (const command of [
      gift({ receiver_user_ids: USERS.slice(0, 20) }),
      gift({ count: 9999 }),
      gift({ unit_price: 0 }),
    ]) {
      given(room)
        .when(command)
        .then([sent(command)]);
    }
  });

  it('validates the receivers: 1-20, distinct', () => {
    for (const receiver_user_ids of [[], USERS, [OWNER, OWNER]]) {
      given(room).when(gift({ receiver_user_ids })).thenError('INVALID_ARGUMENT');
    }
  });

  it('refuses a gift to oneself, alone or among others (GIFT_TO_SELF)', () => {
    for (const receiver_user_ids of [['u-1'], [OWNER, 'u-1'], ['u-r0', 'u-1', 'u-r1']]) {
      const error = given(room).when(gift({ receiver_user_ids })).thenError('GIFT_TO_SELF');
      assert.equal(error.kind, 'validation');
      assert.match(error.message, /yourself/);
    }
  });

  it('refuses a total beyond Number.MAX_SAFE_INTEGER (AMOUNT_TOO_LARGE)', () => {
    const max = Number.MAX_SAFE_INTEGER;
    const tooLarge = [
      gift({ unit_price: max + 1, count: 1 }), // an integer, but not a safe one
      gift({ unit_price: Math.ceil(max / 9999), count: 9999 }),
      gift({ unit_price: Math.floor(max / 2) + 1, count: 1, receiver_user_ids: [OWNER, 'u-r0'] }),
      gift({ unit_price: 1e300, count: 1 }),
    ];
    for (const command of tooLarge) {
      const error = given(room).when(command).thenError('AMOUNT_TOO_LARGE');
      assert.equal(error.kind, 'validation');
    }
    // Exactly the largest safe total is fine.
    const largest = gift({ unit_price: max, count: 1 });
    given(room)
      .when(largest)
      .then([{ ...sent(largest), total_price: max }]);
    const split = gift({ unit_price: Math.floor(max / 3), count: 3 });
    given(room)
      .when(split)
      .then([{ ...sent(split), total_price: Math.floor(max / 3) * 3 }]);
  });

  it('validates the count: an integer from 1 to 9999', () => {
    for (const count of [0, -1, 10_000, 1.5, Number.NaN]) {
      given(room).when(gift({ count })).thenError('INVALID_ARGUMENT');
    }
  });

  it('validates the unit price: a non-negative integer', () => {
    for (const unit_price of [-1, 0.5, Number.NaN, Infinity]) {
      given(room).when(gift({ unit_price })).thenError('INVALID_ARGUMENT');
    }
  });

  it('the sender and every receiver must be in the room', () => {
    given(room)
      .when(gift({ sender_user_id: 'u-out' }))
      .thenError('NOT_IN_ROOM');
    given(room, left('u-1')).when(gift()).thenError('NOT_IN_ROOM');
    given(room, kicked('u-1')).when(gift()).thenError('NOT_IN_ROOM');
    given(room)
      .when(gift({ receiver_user_ids: ['u-r0', 'u-out'] }))
      .thenError('NOT_IN_ROOM');
    given(room, left(OWNER)).when(gift()).thenError('NOT_IN_ROOM');
  });

  it('only in an active room', () => {
    given(room, closed()).when(gift()).thenError('ROOM_CLOSED');
    given(activeRoom()[0]!).when(gift()).thenError('ROOM_NOT_ACTIVE');
    given().when(gift()).thenError('ROOM_NOT_FOUND');
  });
});
