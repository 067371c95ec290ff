/**
 * Forcing someone off the mic, directly (MicDown naming another user) or by locking the
 * seat they hold, follows the kick rule: the owner may act on anyone, an admin only on plain
 * members, nobody on the owner. Refusals change nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  activeRoom,
  adminSet,
  given,
  joined,
  locked,
  OWNER,
  publishingOnSeat,
  released,
} from './testing/given-when-then.js';
import type { VoiceRoomCommand } from './types.js';

const ADMIN = 'u-admin';
const ADMIN_2 = 'u-admin-2';
const MEMBER = 'u-1';
/** Owner on seat 0, two admins on seats 1 and 2, a member on seat 3; seat 4 empty. */
const room = given(
  activeRoom(),
  adminSet(ADMIN),
  adminSet(ADMIN_2),
  ...publishingOnSeat(OWNER, 0),
  ...publishingOnSeat(ADMIN, 1),
  ...publishingOnSeat(ADMIN_2, 2),
  ...publishingOnSeat(MEMBER, 3),
);
const SEAT_OF: Record<string, number> = { [OWNER]: 0, [ADMIN]: 1, [ADMIN_2]: 2, [MEMBER]: 3 };

const down = (user_id: string, operator_user_id: string): VoiceRoomCommand => ({
  type: 'MicDown',
  user_id,
  operator_user_id,
});
const lock = (seat_index: number, operator_user_id: string): VoiceRoomCommand => ({
  type: 'SetMicSeatLock',
  seat_index,
  locked: true,
  operator_user_id,
});

describe('forced MicDown follows the kick rule', () => {
  it('owner → admin and owner → member: allowed', () => {
    for (const target of [ADMIN, MEMBER]) {
      room.when(down(target, OWNER)).then([released(target, SEAT_OF[target]!, 'forced_down')]);
    }
  });

  it('admin → member: allowed', () => {
    room.when(down(MEMBER, ADMIN)).then([released(MEMBER, 3, 'forced_down')]);
  });

  it('admin → owner: refused (CANNOT_TARGET_OWNER)', () => {
    const error = room.when(down(OWNER, ADMIN)).thenError('CANNOT_TARGET_OWNER');
    assert.equal(error.kind, 'forbidden');
  });

  it('admin → admin: refused (NOT_OWNER)', () => {
    assert.equal(room.when(down(ADMIN_2, ADMIN)).thenError('NOT_OWNER').kind, 'forbidden');
  });

  it('anyone may still take themselves down', () => {
    for (const user of [OWNER, ADMIN, MEMBER]) {
      room.when(down(user, user)).then([released(user, SEAT_OF[user]!, 'mic_down')]);
    }
  });
});

describe('locking an occupied seat follows the kick rule', () => {
  it('owner locks an admin’s or a member’s seat: they are taken off', () => {
    for (const target of [ADMIN, MEMBER]) {
      const seat = SEAT_OF[target]!;
      room.when(lock(seat, OWNER)).then([released(target, seat, 'seat_locked'), locked(seat)]);
    }
  });

  it("admin locks a member's seat: allowed", () => {
    room.when(lock(3, ADMIN)).then([released(MEMBER, 3, 'seat_locked'), locked(3)]);
  });

  it("admin locks the owner's seat: refused (CANNOT_TARGET_OWNER)", () => {
    room.when(lock(0, ADMIN)).thenError('CANNOT_TARGET_OWNER');
  });

  it("admin locks another admin's seat: refused (NOT_OWNER)", () => {
    room.when(lock(2, ADMIN)).thenError('NOT_OWNER');
  });

  it('admins still lock empty seats, and their own', () => {
    room.when(lock(4, ADMIN)).then([locked(4)]);
    room.when(lock(1, ADMIN)).then([released(ADMIN, 1, 'seat_locked'), locked(1)]);
    given(activeRoom(), adminSet(ADMIN), ...publishingOnSeat(OWNER, 0))
      .when(lock(5, ADMIN))
      .then([locked(5)]);
  });

  it('plain members still lock nothing', () => {
    given(activeRoom(), joined(MEMBER)).when(lock(4, MEMBER)).thenError('NOT_ADMIN');
  });
});
