/**
 * The owner's and admins' seat controls beyond the seed: moving a seat holder (the mic
 * session kept), the number of seats (shrunk only over seats nobody holds), and a member's
 * own microphone mute shown to the room.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextVoiceRoomDeadline } from './decide.js';
import { roomView } from './view.js';
import {
  activeRoom,
  adminSet,
  fold,
  given,
  joined,
  locked,
  micTakenUp,
  NOW,
  onSeat,
  OWNER,
  publishing,
  released,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { VoiceRoomEvent } from './types.js';

const room = () => [
  ...activeRoom({ seats: 3 }),
  adminSet('u-admin'),
  joined('u-admin'),
  ...onSeat('u-1', 0),
];
const move = (user_id: string, seat_index: number, operator_user_id = OWNER) =>
  ({ type: 'MoveToSeat', user_id, seat_index, operator_user_id }) as const;

/** u-1 moved from seat 0 to seat 2 by `operator_user_id`, the mic session kept. */
const movedTo2 = (operator_user_id: string): VoiceRoomEvent => ({
  type: 'MicSeatChanged',
  user_id: 'u-1',
  from_seat_index: 0,
  seat_index: 2,
  mic_session_id: 'ms-u-1',
  publish_deadline_ms: NOW + settings.publishTimeoutMs,
  operator_user_id,
});

describe('MoveToSeat', () => {
  it('moves a holder to an idle seat, the mic session kept, naming who moved them', () => {
    const state = given(room())
      .when(move('u-1', 2, 'u-admin'))
      .then([movedTo2('u-admin')]);
    assert.deepEqual([state.seats[0]!.user_id, state.seats[2]!.mic_session_id], [null, 'ms-u-1']);
    given(room()).when(move('u-1', 0)).then([]);
  });

  it('refuses a plain member, the owner moved by an admin, no seat held, a busy seat', () => {
    given(room(), joined('u-2'))
      .when(move('u-1', 2, 'u-2'))
      .thenError('NOT_ADMIN');
    given(room(), joined(OWNER), {
      type: 'MicTakenUp',
      user_id: OWNER,
      seat_index: 1,
      mic_session_id: 'ms-o',
      mic_session_room_version: 11,
      publish_deadline_ms: 1,
      at_ms: 1,
    })
      .when(move(OWNER, 2, 'u-admin'))
      .thenError('CANNOT_TARGET_OWNER');
    given(room()).when(move('u-admin', 2)).thenError('NOT_ON_SEAT');
    given(room(), locked(2)).when(move('u-1', 2)).thenError('SEAT_LOCKED');
    given(room(), ...onSeat('u-2', 1))
      .when(move('u-1', 1))
      .thenError('SEAT_OCCUPIED');
  });
});

describe('SetSeatCount', () => {
  const count = (seat_count: number, operator_user_id = OWNER) =>
    ({ type: 'SetSeatCount', seat_count, operator_user_id }) as const;
  const set = (seat_count: number, operator_user_id = OWNER): VoiceRoomEvent => ({
    type: 'SeatCountSet',
    seat_count,
    operator_user_id,
  });

  it('grows with idle seats, and shrinks over seats nobody holds (a lock goes with its seat)', () => {
    const grown = given(room())
      .when(count(5, 'u-admin'))
      .then([set(5, 'u-admin')]);
    assert.deepEqual(
      grown.seats.map((s) => [s.seat_index, s.state]),
      [
        [0, 'pending_publish'],
        [1, 'idle'],
        [2, 'idle'],
        [3, 'idle'],
        [4, 'idle'],
      ],
    );
    const shrunk = given(room(), locked(2))
      .when(count(1))
      .then([set(1)]);
    assert.equal(roomView(shrunk, 1).seats.length, 1);
    given(room()).when(count(3)).then([]);
  });

  it('refuses removing a held seat, a plain member, and a count out of range', () => {
    given(room(), ...onSeat('u-2', 2))
      .when(count(2))
      .thenError('SEAT_OCCUPIED');
    given(room(), joined('u-2')).when(count(4, 'u-2')).thenError('NOT_ADMIN');
    given(room()).when(count(0)).thenError('INVALID_ARGUMENT');
    given(room())
      .when(count(settings.maxSeats + 1))
      .thenError('INVALID_ARGUMENT');
  });
});

describe('SetMicMuted', () => {
  const mute = (user_id: string, muted: boolean) =>
    ({ type: 'SetMicMuted', user_id, muted }) as const;

  it('is the member’s own flag, shown to the room, gone with the presence', () => {
    const muted = given(room())
      .when(mute('u-1', true))
      .then([{ type: 'MicMuteSet', user_id: 'u-1', muted: true }]);
    assert.deepEqual(roomView(muted, 1).mic_muted, ['u-1']);
    given(room(), { type: 'MicMuteSet', user_id: 'u-1', muted: true })
      .when(mute('u-1', true))
      .then([]);
    const mutedThenLeft = given(room(), { type: 'MicMuteSet', user_id: 'u-1', muted: true })
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([
        {
          type: 'MicReleased',
          user_id: 'u-1',
          seat_index: 0,
          mic_session_id: 'ms-u-1',
          reason: 'leave',
        },
        { type: 'UserLeft', user_id: 'u-1', at_ms: NOW },
      ]);
    assert.deepEqual(roomView(mutedThenLeft, 2).mic_muted, []);
    given(room()).when(mute('u-9', true)).thenError('NOT_IN_ROOM');
  });
});

describe('SetSeatMuted (禁麦)', () => {
  const muteSeat = (seat_index: number, muted: boolean, operator_user_id = OWNER) =>
    ({ type: 'SetSeatMuted', seat_index, muted, operator_user_id }) as const;
  const seatMuted = (
    seat_index: number,
    muted: boolean,
    operator_user_id = OWNER,
    publish_deadline_ms?: number,
  ): VoiceRoomEvent => ({
    type: 'SeatMuteSet',
    seat_index,
    muted,
    operator_user_id,
    ...(publish_deadline_ms === undefined ? {} : { publish_deadline_ms }),
  });

  it('mutes a held seat: the holder keeps it and its session; the view shows it', () => {
    const state = given(room())
      .when(muteSeat(0, true, 'u-admin'))
      .then([seatMuted(0, true, 'u-admin')]);
    assert.deepEqual(
      [state.seats[0]!.user_id, state.seats[0]!.mic_session_id, roomView(state, 1).seats[0]!.muted],
      ['u-1', 'ms-u-1', true],
    );
    given(room(), seatMuted(0, true)).when(muteSeat(0, true)).then([]);
  });

  it('follows the kick rule for a held seat, and needs a seat and a manager', () => {
    given(room(), joined(OWNER), micTakenUp(OWNER, 1))
      .when(muteSeat(1, true, 'u-admin'))
      .thenError('CANNOT_TARGET_OWNER');
    given(room(), joined('u-2'))
      .when(muteSeat(1, true, 'u-2'))
      .thenError('NOT_ADMIN');
    given(room()).when(muteSeat(7, true)).thenError('SEAT_NOT_FOUND');
  });

  it('belongs to the seat: it survives the holder leaving and the next one taking it', () => {
    const state = fold([
      ...room(),
      seatMuted(0, true),
      released('u-1', 0, 'mic_down'),
      ...onSeat('u-2', 0),
    ]);
    assert.deepEqual([state.seats[0]!.user_id, state.seats[0]!.muted], ['u-2', true]);
    const moved = given(room(), seatMuted(2, true))
      .when({ type: 'MoveToSeat', user_id: 'u-1', seat_index: 2, operator_user_id: OWNER })
      .then([movedTo2(OWNER)]);
    assert.deepEqual([moved.seats[0]!.muted, moved.seats[2]!.muted], [undefined, true]);
  });

  it('holds a pending seat without a publish deadline; unmuting starts it again', () => {
    const mutedPending = fold([...room(), seatMuted(0, true)]);
    assert.equal(nextVoiceRoomDeadline(mutedPending, settings), T0 + settings.presenceTimeoutMs);
    const late = T0 + settings.publishTimeoutMs + 1;
    const expired = given(room(), seatMuted(0, true)).when(
      { type: 'ExpireDeadlines' },
      { nowMs: late },
    ).result as VoiceRoomEvent[];
    assert.deepEqual(expired, [], 'no publish timeout while muted');
    given(room(), seatMuted(0, true))
      .when(muteSeat(0, false), { nowMs: late })
      .then([seatMuted(0, false, OWNER, late + settings.publishTimeoutMs)]);
  });

  it("a muted seat's audio stop (its producer paused) keeps the seat", () => {
    const live = [...room(), publishing('u-1', 0, { eventTimeMs: T0 + 100 }), seatMuted(0, true)];
    given(live)
      .when({
        type: 'RtcAudioStopped',
        user_id: 'u-1',
        event_time_ms: T0 + 500,
        mic_session_id: 'ms-u-1',
      })
      .then([]);
  });
});
