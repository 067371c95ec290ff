/**
 * Seat mode, seat applications and room settings: every command and refusal (given/when/
 * then), the seat a decision gives, the ways an application ends, and its deadline.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextVoiceRoomDeadline } from './decide.js';
import { DEFAULT_SEAT_APPLICATION_TTL_MS } from './decide-seats.js';
import { roomView } from './view.js';
import {
  activeRoom,
  adminSet,
  given,
  givenState,
  joined,
  locked,
  NOW,
  OWNER,
  settings,
  T0,
  VERSION,
} from './testing/given-when-then.js';
import type { SeatApplicationEnd, VoiceRoomCommand, VoiceRoomEvent } from './types.js';

const TTL = DEFAULT_SEAT_APPLICATION_TTL_MS;
const applyMode = (operator_user_id = OWNER): VoiceRoomEvent => ({
  type: 'RoomUpdated',
  operator_user_id,
  seat_mode: 'apply',
});
const applied = (user_id: string, seat_index: number | null = null, at = T0): VoiceRoomEvent => ({
  type: 'SeatApplied',
  user_id,
  seat_index,
  at_ms: at,
  expires_at_ms: at + TTL,
});
const ended = (
  user_id: string,
  reason: SeatApplicationEnd,
  operator_user_id?: string,
): VoiceRoomEvent => ({
  type: 'SeatApplicationEnded',
  user_id,
  reason,
  ...(operator_user_id === undefined ? {} : { operator_user_id }),
});
const seatTaken = (user_id: string, seat_index: number, at = NOW): VoiceRoomEvent => ({
  type: 'MicTakenUp',
  user_id,
  seat_index,
  mic_session_id: `ms-${VERSION}`,
  mic_session_room_version: VERSION,
  publish_deadline_ms: at + settings.publishTimeoutMs,
  at_ms: at,
});
const apply = (user_id: string, seat_index?: number): VoiceRoomCommand =>
  seat_index === undefined
    ? { type: 'ApplyForSeat', user_id }
    : { type: 'ApplyForSeat', user_id, seat_index };
const approve = (user_id: string, operator_user_id = OWNER, seat_index?: number) =>
  ({
    type: 'ApproveSeatApplication',
    user_id,
    operator_user_id,
    ...(seat_index === undefined ? {} : { seat_index }),
  }) as const;
/** An active room of 2 seats in apply mode with u-1 and u-2 present and u-admin an admin. */
const room = () => [
  ...activeRoom({ seats: 2 }),
  applyMode(),
  adminSet('u-admin'),
  joined('u-admin'),
  joined('u-1'),
  joined('u-2'),
];

describe('seat mode', () => {
  it('is set at creation and shown in the view', () => {
    const state = given()
      .when({
        type: 'CreateRoom',
        owner_user_id: OWNER,
        title: 'Apply',
        seat_count: 4,
        seat_mode: 'apply',
      })
      .then([
        {
          type: 'RoomCreated',
          owner_user_id: OWNER,
          title: 'Apply',
          seat_count: 4,
          seat_mode: 'apply',
          at_ms: NOW,
        },
        { type: 'RoomActivated', at_ms: NOW },
      ]);
    assert.equal(roomView(state, 1).seat_mode, 'apply');
  });

  it('apply: a plain member cannot MicUp; the owner and admins can', () => {
    given(room())
      .when({ type: 'MicUp', user_id: 'u-1', seat_index: 0 })
      .thenError('SEAT_APPLICATION_REQUIRED');
    given(room())
      .when({ type: 'MicUp', user_id: 'u-admin', seat_index: 0 })
      .then([seatTaken('u-admin', 0)]);
  });

  it('free: nobody applies; MicUp is the seed’s', () => {
    given(activeRoom(), joined('u-1')).when(apply('u-1')).thenError('SEAT_MODE_FREE');
    given(activeRoom(), joined('u-1'))
      .when({ type: 'MicUp', user_id: 'u-1', seat_index: 0 })
      .then([seatTaken('u-1', 0)]);
  });
});

describe('ApplyForSeat', () => {
  it('records the application with its deadline; the same again is a no-op', () => {
    const state = given(room())
      .when(apply('u-1', 1))
      .then([applied('u-1', 1, NOW)]);
    assert.equal(roomView(state, 1).seat_application_count, 1);
    given(room(), applied('u-1', 1)).when(apply('u-1', 1)).then([]);
  });

  it('refuses a second application, a seat holder, an absent user and a seat that is not there', () => {
    given(room(), applied('u-1', 1)).when(apply('u-1', 0)).thenError('ALREADY_APPLIED');
    given(room(), applied('u-1')).when(apply('u-1', 0)).thenError('ALREADY_APPLIED');
    given(room(), seatTaken('u-admin', 0)).when(apply('u-admin')).thenError('ALREADY_ON_SEAT');
    given(room()).when(apply('u-9')).thenError('NOT_IN_ROOM');
    given(room()).when(apply('u-1', 7)).thenError('SEAT_NOT_FOUND');
  });
});

describe('ApproveSeatApplication', () => {
  it('takes the seat as a MicUp does: a new session, pending_publish, the deadline', () => {
    const state = given(room(), applied('u-1', 1))
      .when(approve('u-1'))
      .then([ended('u-1', 'approved', OWNER), seatTaken('u-1', 1)]);
    assert.equal(state.seats[1]!.state, 'pending_publish');
    assert.equal(state.seats[1]!.user_id, 'u-1');
    assert.deepEqual(state.seat_applications, []);
  });

  it('on the seat the approver names, else the one applied for, else the first idle one', () => {
    given(room(), applied('u-1', 1))
      .when(approve('u-1', 'u-admin', 0))
      .then([ended('u-1', 'approved', 'u-admin'), seatTaken('u-1', 0)]);
    given(room(), locked(0), applied('u-1'))
      .when(approve('u-1'))
      .then([ended('u-1', 'approved', OWNER), seatTaken('u-1', 1)]);
  });

  it('of two approvals for the last idle seat, the second is refused and nobody is bumped', () => {
    const first = given(room(), seatTaken('u-admin', 0), applied('u-1'), applied('u-2'))
      .when(approve('u-1'))
      .then([ended('u-1', 'approved', OWNER), seatTaken('u-1', 1)]);
    givenState(first).when(approve('u-2', 'u-admin')).thenError('NO_FREE_SEAT');
    assert.equal(first.seats[1]!.user_id, 'u-1', 'the first stays');
    given(
      room(),
      seatTaken('u-admin', 0),
      applied('u-1', 1),
      applied('u-2', 1),
      seatTaken('u-1', 1),
    )
      .when(approve('u-2'))
      .thenError('SEAT_OCCUPIED');
  });

  it('refuses a plain member, a missing application, a locked or unknown seat', () => {
    given(room(), applied('u-1')).when(approve('u-1', 'u-2')).thenError('NOT_ADMIN');
    given(room()).when(approve('u-1')).thenError('NO_SEAT_APPLICATION');
    given(room(), locked(1), applied('u-1', 1)).when(approve('u-1')).thenError('SEAT_LOCKED');
    given(room(), applied('u-1'))
      .when(approve('u-1', OWNER, 5))
      .thenError('SEAT_NOT_FOUND');
  });
});

describe('the other ends of an application', () => {
  it('RejectSeatApplication (owner or admin) and CancelSeatApplication (the applicant)', () => {
    given(room(), applied('u-1'))
      .when({ type: 'RejectSeatApplication', user_id: 'u-1', operator_user_id: 'u-admin' })
      .then([ended('u-1', 'rejected', 'u-admin')]);
    given(room(), applied('u-1'))
      .when({ type: 'RejectSeatApplication', user_id: 'u-1', operator_user_id: 'u-2' })
      .thenError('NOT_ADMIN');
    given(room(), applied('u-1'))
      .when({ type: 'CancelSeatApplication', user_id: 'u-1' })
      .then([ended('u-1', 'cancelled')]);
    given(room())
      .when({ type: 'CancelSeatApplication', user_id: 'u-1' })
      .thenError('NO_SEAT_APPLICATION');
  });

  it('ends when the applicant leaves, is kicked or goes stale, and when the room closes', () => {
    given(room(), applied('u-1'))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([ended('u-1', 'left'), { type: 'UserLeft', user_id: 'u-1', at_ms: NOW }]);
    given(room(), applied('u-1'))
      .when({ type: 'KickUser', user_id: 'u-1', operator_user_id: OWNER })
      .then([
        ended('u-1', 'kicked'),
        { type: 'UserKicked', user_id: 'u-1', operator_user_id: OWNER },
      ]);
    const staleAt = T0 + settings.presenceTimeoutMs;
    const stale = given(room(), applied('u-1')).when(
      { type: 'ExpireDeadlines' },
      { nowMs: staleAt },
    ).result as VoiceRoomEvent[];
    assert.deepEqual(
      stale.filter((e) => e.type === 'SeatApplicationEnded'),
      [ended('u-1', 'stale')],
    );
    given(room(), applied('u-1'))
      .when({ type: 'CloseRoom', operator_user_id: OWNER })
      .then([
        ended('u-1', 'room_closed'),
        { type: 'RoomClosed', operator_user_id: OWNER, at_ms: NOW },
      ]);
  });

  it('ends when the applicant takes a seat another way, and when the room goes back to free', () => {
    given(room(), applied('u-admin'))
      .when({ type: 'MicUp', user_id: 'u-admin', seat_index: 0 })
      .then([ended('u-admin', 'seated'), seatTaken('u-admin', 0)]);
    given(room(), applied('u-1'), applied('u-2'))
      .when({ type: 'UpdateRoom', operator_user_id: OWNER, seat_mode: 'free' })
      .then([
        { type: 'RoomUpdated', operator_user_id: OWNER, seat_mode: 'free' },
        ended('u-1', 'seat_mode_changed'),
        ended('u-2', 'seat_mode_changed'),
      ]);
  });

  it('expires at its deadline, a deadline of the cell', () => {
    const state = given(
      room(),
      joined('u-1', T0 + 50_000),
      applied('u-1', null, T0 + 50_000),
    ).state;
    const due = T0 + 50_000 + TTL;
    assert.equal(
      nextVoiceRoomDeadline(state, settings),
      Math.min(due, T0 + settings.presenceTimeoutMs),
    );
    // Seen lately: the applicant stays present past the application's deadline.
    const seen: VoiceRoomEvent = {
      type: 'PresenceRefreshed',
      user_id: 'u-1',
      at_ms: T0 + TTL - 10,
    };
    given(room(), applied('u-1', null, T0), seen)
      .when({ type: 'ExpireDeadlines' }, { nowMs: T0 + TTL })
      .then(expiredAt(T0 + TTL));
    given(room(), applied('u-1', null, NOW))
      .when({ type: 'ExpireDeadlines' }, { nowMs: NOW + TTL / 2 })
      .then([]);
  });
});

/** What ExpireDeadlines decides at `nowMs` in room() with u-1's application due: the others go stale. */
function expiredAt(nowMs: number): VoiceRoomEvent[] {
  return [
    ...['u-2', 'u-admin'].map((user_id): VoiceRoomEvent => ({
      type: 'PresenceStale',
      user_id,
      at_ms: nowMs,
    })),
    ended('u-1', 'expired'),
  ];
}

describe('UpdateRoom', () => {
  it('records only what changes; an empty announcement clears it', () => {
    const state = given(room())
      .when({
        type: 'UpdateRoom',
        operator_user_id: 'u-admin',
        title: ' Late show ',
        announcement: '欢迎',
      })
      .then([
        {
          type: 'RoomUpdated',
          operator_user_id: 'u-admin',
          title: 'Late show',
          announcement: '欢迎',
        },
      ]);
    assert.deepEqual(
      [roomView(state, 1).title, roomView(state, 1).announcement],
      ['Late show', '欢迎'],
    );
    given(room())
      .when({
        type: 'UpdateRoom',
        operator_user_id: OWNER,
        title: 'Friday night',
        seat_mode: 'apply',
      })
      .then([]);
    given(room(), { type: 'RoomUpdated', operator_user_id: OWNER, announcement: 'x' })
      .when({ type: 'UpdateRoom', operator_user_id: OWNER, announcement: '' })
      .then([{ type: 'RoomUpdated', operator_user_id: OWNER, announcement: '' }]);
  });

  it('refuses a plain member and bad text', () => {
    given(room())
      .when({ type: 'UpdateRoom', operator_user_id: 'u-1', title: 'x' })
      .thenError('NOT_ADMIN');
    given(room())
      .when({ type: 'UpdateRoom', operator_user_id: OWNER, announcement: 'a'.repeat(501) })
      .thenError('INVALID_ARGUMENT');
    given(room())
      .when({ type: 'UpdateRoom', operator_user_id: OWNER, announcement: 'line\nbreak' })
      .thenError('INVALID_ARGUMENT');
  });
});

describe('seat invitations', () => {
  const invite = (user_id: string, operator_user_id = OWNER, seat_index?: number) =>
    ({
      type: 'InviteToSeat',
      user_id,
      operator_user_id,
      ...(seat_index === undefined ? {} : { seat_index }),
    }) as const;
  const invited = (
    user_id: string,
    seat_index: number | null = null,
    operator_user_id = OWNER,
    at = T0,
  ): VoiceRoomEvent => ({
    type: 'SeatInvited',
    user_id,
    seat_index,
    operator_user_id,
    at_ms: at,
    expires_at_ms: at + TTL,
  });
  const invitationEnded = (
    user_id: string,
    reason: Extract<VoiceRoomEvent, { type: 'SeatInvitationEnded' }>['reason'],
  ): VoiceRoomEvent => ({ type: 'SeatInvitationEnded', user_id, reason });
  const accept = { type: 'AcceptSeatInvitation', user_id: 'u-1' } as const;

  it('InviteToSeat records the invitation, shown in the view; the same again is a no-op', () => {
    const state = given(room())
      .when(invite('u-1', 'u-admin', 1))
      .then([invited('u-1', 1, 'u-admin', NOW)]);
    assert.deepEqual(roomView(state, 1).seat_invitations, [
      { user_id: 'u-1', seat_index: 1, operator_user_id: 'u-admin', expires_at_ms: NOW + TTL },
    ]);
    given(room(), invited('u-1', 1))
      .when(invite('u-1', OWNER, 1))
      .then([]);
  });

  it('refuses a plain member, oneself, someone absent or seated, and a second invitation', () => {
    given(room()).when(invite('u-1', 'u-2')).thenError('NOT_ADMIN');
    given(room()).when(invite('u-admin', 'u-admin')).thenError('CANNOT_TARGET_SELF');
    given(room()).when(invite('u-9')).thenError('NOT_IN_ROOM');
    given(room(), seatTaken('u-admin', 0)).when(invite('u-admin')).thenError('ALREADY_ON_SEAT');
    given(room(), invited('u-1'))
      .when(invite('u-1', OWNER, 0))
      .thenError('ALREADY_INVITED');
    given(room())
      .when(invite('u-1', OWNER, 9))
      .thenError('SEAT_NOT_FOUND');
  });

  it('accepting takes the seat as a MicUp does, in apply mode too, and ends an application', () => {
    given(room(), invited('u-1', 1))
      .when(accept)
      .then([invitationEnded('u-1', 'accepted'), seatTaken('u-1', 1)]);
    given(room(), applied('u-1', 0), invited('u-1'))
      .when(accept)
      .then([invitationEnded('u-1', 'accepted'), ended('u-1', 'seated'), seatTaken('u-1', 0)]);
  });

  it('accepting a seat taken or locked meanwhile is refused; the invitation stays', () => {
    const state = given(room(), invited('u-1', 1), locked(1)).state;
    givenState(state).when(accept).thenError('SEAT_LOCKED');
    assert.equal(state.seat_invitations?.length, 1);
    given(room(), invited('u-1', 1), seatTaken('u-2', 1)).when(accept).thenError('SEAT_OCCUPIED');
    given(room(), seatTaken('u-admin', 0), seatTaken('u-2', 1), invited('u-1'))
      .when(accept)
      .thenError('NO_FREE_SEAT');
  });

  it('declines, and ends with the invitee’s leave, a seat taken another way, or its deadline', () => {
    given(room(), invited('u-1'))
      .when({ type: 'DeclineSeatInvitation', user_id: 'u-1' })
      .then([invitationEnded('u-1', 'declined')]);
    given(room())
      .when({ type: 'DeclineSeatInvitation', user_id: 'u-1' })
      .thenError('NO_SEAT_INVITATION');
    given(room(), applied('u-1'), invited('u-1'))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([
        ended('u-1', 'left'),
        invitationEnded('u-1', 'left'),
        { type: 'UserLeft', user_id: 'u-1', at_ms: NOW },
      ]);
    given(room(), applied('u-1'), invited('u-1'))
      .when(approve('u-1'))
      .then([
        ended('u-1', 'approved', OWNER),
        invitationEnded('u-1', 'seated'),
        seatTaken('u-1', 0),
      ]);
    const seen: VoiceRoomEvent = {
      type: 'PresenceRefreshed',
      user_id: 'u-1',
      at_ms: T0 + TTL - 10,
    };
    const expired = given(room(), invited('u-1', null, OWNER, T0), seen).when(
      { type: 'ExpireDeadlines' },
      { nowMs: T0 + TTL },
    ).result as VoiceRoomEvent[];
    assert.deepEqual(
      expired.filter((e) => e.type === 'SeatInvitationEnded'),
      [invitationEnded('u-1', 'expired')],
    );
  });
});
