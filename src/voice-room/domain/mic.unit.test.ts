/**
 * The Mic machine of room-cell-state-machines.md: every arrow, mic sessions (an old
 * session's confirm, stop or timeout never clears a new one), stale and out-of-order RTC
 * callbacks (no-ops, never errors) and RTC room_exited (frees the seat, keeps presence).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDomainError } from '../../domain/decider.js';
import { presenceOf } from './evolve.js';
import {
  activeRoom,
  adminSet,
  closed,
  fold,
  given,
  joined,
  left,
  locked,
  micTakenUp,
  NOW,
  onSeat,
  OWNER,
  publishing,
  publishingOnSeat,
  released,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { MicSeat, VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from './types.js';

const DEADLINE = T0 + settings.publishTimeoutMs;
const seat = (state: VoiceRoomState, index: number): MicSeat => state.seats[index]!;
const lock = (seat_index: number, isLocked: boolean, operator_user_id = OWNER) =>
  ({ type: 'SetMicSeatLock', seat_index, locked: isLocked, operator_user_id }) as const;
const rtc = (
  type: 'RtcAudioStarted' | 'RtcAudioStopped' | 'RtcRoomExited',
  user_id: string,
  event_time_ms: number,
  mic_session_id?: string,
): VoiceRoomCommand =>
  mic_session_id === undefined
    ? { type, user_id, event_time_ms }
    : { type, user_id, event_time_ms, mic_session_id };

describe('Mic arrows: idle ↔ locked', () => {
  it('idle → locked: SetMicSeatLock(true)', () => {
    const state = given(activeRoom())
      .when(lock(2, true))
      .then([locked(2)]);
    assert.equal(seat(state, 2).state, 'locked');
  });

  it('locked → idle: SetMicSeatLock(false)', () => {
    const state = given(activeRoom(), locked(2))
      .when(lock(2, false))
      .then([locked(2, false)]);
    assert.equal(seat(state, 2).state, 'idle');
  });

  it('repeating a lock or an unlock is a no-op', () => {
    given(activeRoom(), locked(2)).when(lock(2, true)).then([]);
    given(activeRoom()).when(lock(2, false)).then([]);
  });

  it('locking an occupied seat takes its user off first', () => {
    for (const events of [onSeat('u-1', 2), publishingOnSeat('u-1', 2)]) {
      const state = given(activeRoom(), events)
        .when(lock(2, true))
        .then([released('u-1', 2, 'seat_locked'), locked(2)]);
      assert.deepEqual([seat(state, 2).state, seat(state, 2).user_id], ['locked', null]);
      assert.equal(presenceOf(state, 'u-1')?.state, 'present');
    }
  });

  it('owner and admins lock; plain users cannot; the seat must exist', () => {
    given(activeRoom(), adminSet('u-admin'))
      .when(lock(0, true, 'u-admin'))
      .then([locked(0)]);
    given(activeRoom(), joined('u-1'))
      .when(lock(0, true, 'u-1'))
      .thenError('NOT_ADMIN');
    for (const bad of [-1, 8, 1.5, Number.NaN]) {
      given(activeRoom()).when(lock(bad, true)).thenError('SEAT_NOT_FOUND');
    }
  });
});

describe('Mic arrows: idle → pending_publish (MicUp)', () => {
  it('opens a new session named after the version, with a publish deadline', () => {
    const state = given(activeRoom(), joined('u-1'))
      .when({ type: 'MicUp', user_id: 'u-1', seat_index: 3 }, { version: 42 })
      .then([
        {
          type: 'MicTakenUp',
          user_id: 'u-1',
          seat_index: 3,
          mic_session_id: 'ms-42',
          mic_session_room_version: 42,
          publish_deadline_ms: NOW + settings.publishTimeoutMs,
          at_ms: NOW,
        },
      ]);
    assert.deepEqual(seat(state, 3), {
      seat_index: 3,
      state: 'pending_publish',
      user_id: 'u-1',
      mic_session_id: 'ms-42',
      mic_session_room_version: 42,
      mic_session_started_at_ms: NOW,
      last_publish_event_time_ms: null,
      publish_deadline_ms: NOW + settings.publishTimeoutMs,
    });
  });

  it('refuses a locked, a taken or a missing seat, and users not in the room', () => {
    given(activeRoom(), joined('u-1'), locked(3))
      .when({ type: 'MicUp', user_id: 'u-1', seat_index: 3 })
      .thenError('SEAT_LOCKED');
    given(activeRoom(), joined('u-1'), ...onSeat('u-2', 3))
      .when({ type: 'MicUp', user_id: 'u-1', seat_index: 3 })
      .thenError('SEAT_OCCUPIED');
    for (const bad of [-1, 8, 0.5]) {
      given(activeRoom(), joined('u-1'))
        .when({ type: 'MicUp', user_id: 'u-1', seat_index: bad })
        .thenError('SEAT_NOT_FOUND');
    }
    given(activeRoom())
      .when({ type: 'MicUp', user_id: 'u-1', seat_index: 0 })
      .thenError('NOT_IN_ROOM');
    given(activeRoom(), joined('u-1'), left('u-1'))
      .when({ type: 'MicUp', user_id: 'u-1', seat_index: 0 })
      .thenError('NOT_IN_ROOM');
  });

  it('one seat per user: another seat is refused, the same seat is a no-op retry', () => {
    const g = given(activeRoom(), ...onSeat('u-1', 3));
    g.when({ type: 'MicUp', user_id: 'u-1', seat_index: 4 }).thenError('ALREADY_ON_SEAT');
    g.when({ type: 'MicUp', user_id: 'u-1', seat_index: 3 }).then([]);
  });
});

describe('Mic arrows: pending_publish → publishing', () => {
  it('ConfirmMicPublishing of the current session', () => {
    const state = given(activeRoom(), ...onSeat('u-1', 3))
      .when({ type: 'ConfirmMicPublishing', user_id: 'u-1', mic_session_id: 'ms-u-1' })
      .then([publishing('u-1', 3, { source: 'client', eventTimeMs: NOW })]);
    assert.equal(seat(state, 3).state, 'publishing');
    assert.equal(seat(state, 3).publish_deadline_ms, null);
    assert.equal(seat(state, 3).last_publish_event_time_ms, null, 'client time is not RTC time');
  });

  it('RTC audio_started, with or without the session id', () => {
    for (const session of ['ms-u-1', undefined]) {
      const state = given(activeRoom(), ...onSeat('u-1', 3))
        .when(rtc('RtcAudioStarted', 'u-1', T0 + 200, session))
        .then([publishing('u-1', 3, { eventTimeMs: T0 + 200 })]);
      assert.equal(seat(state, 3).state, 'publishing');
      assert.equal(seat(state, 3).last_publish_event_time_ms, T0 + 200);
      assert.equal(seat(state, 3).publish_deadline_ms, null);
    }
  });

  it('confirming again while publishing is a no-op (client or RTC duplicate)', () => {
    const g = given(activeRoom(), ...publishingOnSeat('u-1', 3));
    g.when({ type: 'ConfirmMicPublishing', user_id: 'u-1', mic_session_id: 'ms-u-1' }).then([]);
    g.when(rtc('RtcAudioStarted', 'u-1', T0 + 100, 'ms-u-1')).then([]);
    g.when(rtc('RtcAudioStarted', 'u-1', T0 + 500)).then([]);
  });

  it('a confirm needs the seat and the current session', () => {
    given(activeRoom(), joined('u-1'))
      .when({ type: 'ConfirmMicPublishing', user_id: 'u-1', mic_session_id: 'ms-u-1' })
      .thenError('NOT_ON_SEAT');
    given(activeRoom(), ...onSeat('u-1', 3))
      .when({ type: 'ConfirmMicPublishing', user_id: 'u-1', mic_session_id: 'ms-other' })
      .thenError('MIC_SESSION_MISMATCH');
  });
});

describe('Mic arrows: pending_publish → idle', () => {
  it('publish_timeout: ExpireDeadlines at publish_deadline_ms, not before', () => {
    const g = given(activeRoom(), ...onSeat('u-1', 3));
    g.when({ type: 'ExpireDeadlines' }, { nowMs: DEADLINE - 1 }).then([]);
    const state = g
      .when({ type: 'ExpireDeadlines' }, { nowMs: DEADLINE })
      .then([released('u-1', 3, 'publish_timeout')]);
    assert.deepEqual([seat(state, 3).state, seat(state, 3).user_id], ['idle', null]);
    assert.equal(presenceOf(state, 'u-1')?.state, 'present', 'the user stays in the room');
  });

  it('a publishing seat has no publish deadline', () => {
    given(activeRoom(), ...publishingOnSeat('u-1', 3))
      .when({ type: 'ExpireDeadlines' }, { nowMs: DEADLINE + 1_000 })
      .then([]);
  });

  it('MicDown', () => {
    const state = given(activeRoom(), ...onSeat('u-1', 3))
      .when({ type: 'MicDown', user_id: 'u-1' })
      .then([released('u-1', 3, 'mic_down')]);
    assert.equal(seat(state, 3).state, 'idle');
  });

  it('LeaveRoom', () => {
    given(activeRoom(), ...onSeat('u-1', 3))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([released('u-1', 3, 'leave'), left('u-1', NOW)]);
  });
});

describe('Mic arrows: publishing → idle', () => {
  it('MicDown (by the user, naming themselves as operator or not)', () => {
    const g = given(activeRoom(), ...publishingOnSeat('u-1', 3));
    g.when({ type: 'MicDown', user_id: 'u-1' }).then([released('u-1', 3, 'mic_down')]);
    g.when({ type: 'MicDown', user_id: 'u-1', operator_user_id: 'u-1' }).then([
      released('u-1', 3, 'mic_down'),
    ]);
  });

  it('RTC audio_stopped of the current session', () => {
    for (const session of ['ms-u-1', undefined]) {
      const state = given(activeRoom(), ...publishingOnSeat('u-1', 3))
        .when(rtc('RtcAudioStopped', 'u-1', T0 + 300, session))
        .then([released('u-1', 3, 'audio_stopped', 'ms-u-1', T0 + 300)]);
      assert.equal(seat(state, 3).state, 'idle');
    }
  });

  it('LeaveRoom', () => {
    given(activeRoom(), ...publishingOnSeat('u-1', 3))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([released('u-1', 3, 'leave'), left('u-1', NOW)]);
  });

  it('RTC audio_stopped while only pending is not an arrow: no-op', () => {
    given(activeRoom(), ...onSeat('u-1', 3))
      .when(rtc('RtcAudioStopped', 'u-1', T0 + 300, 'ms-u-1'))
      .then([]);
  });
});

describe('Mic: MicDown by others', () => {
  it('owner and admins take someone down (forced_down); plain users cannot', () => {
    const g = given(
      activeRoom(),
      adminSet('u-admin'),
      joined('u-2'),
      ...publishingOnSeat('u-1', 3),
    );
    g.when({ type: 'MicDown', user_id: 'u-1', operator_user_id: OWNER }).then([
      released('u-1', 3, 'forced_down'),
    ]);
    g.when({ type: 'MicDown', user_id: 'u-1', operator_user_id: 'u-admin' }).then([
      released('u-1', 3, 'forced_down'),
    ]);
    g.when({ type: 'MicDown', user_id: 'u-1', operator_user_id: 'u-2' }).thenError('NOT_ADMIN');
  });

  it('MicDown of someone without a seat is refused', () => {
    given(activeRoom(), joined('u-1'))
      .when({ type: 'MicDown', user_id: 'u-1' })
      .thenError('NOT_ON_SEAT');
  });
});

describe('Mic arrows: ChangeMicSeat keeps the mic session', () => {
  it('publishing → pending_publish on the new seat, same session, new deadline', () => {
    const before = fold([...activeRoom(), ...publishingOnSeat('u-1', 3)]);
    const state = given(activeRoom(), ...publishingOnSeat('u-1', 3))
      .when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 6 })
      .then([
        {
          type: 'MicSeatChanged',
          user_id: 'u-1',
          from_seat_index: 3,
          seat_index: 6,
          mic_session_id: 'ms-u-1',
          publish_deadline_ms: NOW + settings.publishTimeoutMs,
        },
      ]);
    assert.deepEqual(seat(state, 3), { ...seat(before, 0), seat_index: 3 }, 'old seat idle');
    assert.deepEqual(seat(state, 6), {
      ...seat(before, 3),
      seat_index: 6,
      state: 'pending_publish',
      publish_deadline_ms: NOW + settings.publishTimeoutMs,
    });
  });

  it('pending_publish → pending_publish, same session', () => {
    const state = given(activeRoom(), ...onSeat('u-1', 3))
      .when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 0 })
      .then([
        {
          type: 'MicSeatChanged',
          user_id: 'u-1',
          from_seat_index: 3,
          seat_index: 0,
          mic_session_id: 'ms-u-1',
          publish_deadline_ms: NOW + settings.publishTimeoutMs,
        },
      ]);
    assert.deepEqual(
      [seat(state, 0).state, seat(state, 0).user_id, seat(state, 0).mic_session_id],
      ['pending_publish', 'u-1', 'ms-u-1'],
    );
    assert.equal(seat(state, 3).user_id, null);
  });

  it('after a move, RTC audio_started of the same session publishes on the new seat', () => {
    const state = given(activeRoom(), ...publishingOnSeat('u-1', 3), {
      type: 'MicSeatChanged',
      user_id: 'u-1',
      from_seat_index: 3,
      seat_index: 6,
      mic_session_id: 'ms-u-1',
      publish_deadline_ms: NOW + settings.publishTimeoutMs,
    })
      .when(rtc('RtcAudioStarted', 'u-1', T0 + 2_000, 'ms-u-1'))
      .then([publishing('u-1', 6, { eventTimeMs: T0 + 2_000 })]);
    assert.equal(seat(state, 6).state, 'publishing');
  });

  it('refuses a locked, taken or missing target and users without a seat', () => {
    const g = given(activeRoom(), locked(5), ...onSeat('u-2', 4), ...onSeat('u-1', 3));
    g.when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 5 }).thenError('SEAT_LOCKED');
    g.when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 4 }).thenError('SEAT_OCCUPIED');
    g.when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 8 }).thenError('SEAT_NOT_FOUND');
    g.when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: -1 }).thenError('SEAT_NOT_FOUND');
    g.when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 3 }).then([]);
    given(activeRoom(), joined('u-1'))
      .when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 1 })
      .thenError('NOT_ON_SEAT');
    given(activeRoom())
      .when({ type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 1 })
      .thenError('NOT_IN_ROOM');
  });
});

describe('Mic sessions: an old session never clears a new one', () => {
  // u-1 had session ms-old (seat 3, from T0), went down, and took seat 3 again at T0 + 5000.
  const NEW_AT = T0 + 5_000;
  const history: VoiceRoomEvent[] = [
    ...activeRoom(),
    ...publishingOnSeat('u-1', 3, { session: 'ms-old' }),
    released('u-1', 3, 'mic_down', 'ms-old'),
    micTakenUp('u-1', 3, { session: 'ms-new', at: NEW_AT, version: 20 }),
  ];
  const now = NEW_AT + 1_000;

  it("the old session's confirm is refused and changes nothing", () => {
    given(history)
      .when(
        { type: 'ConfirmMicPublishing', user_id: 'u-1', mic_session_id: 'ms-old' },
        {
          nowMs: now,
        },
      )
      .thenError('MIC_SESSION_MISMATCH');
  });

  it("the old session's RTC start, stop and exit are no-ops, even with new event times", () => {
    const g = given(history);
    for (const type of ['RtcAudioStarted', 'RtcAudioStopped', 'RtcRoomExited'] as const) {
      g.when(rtc(type, 'u-1', now, 'ms-old'), { nowMs: now }).then([]);
    }
    // Same for a publishing new session.
    const publishingNew = given(
      history,
      publishing('u-1', 3, { session: 'ms-new', eventTimeMs: NEW_AT + 10 }),
    );
    for (const type of ['RtcAudioStopped', 'RtcRoomExited'] as const) {
      publishingNew.when(rtc(type, 'u-1', now, 'ms-old'), { nowMs: now }).then([]);
    }
  });

  it("the old session's publish timeout does not clear the new session", () => {
    // The old deadline (T0 + 15 s) has passed; the new one (NEW_AT + 15 s) has not.
    given(history)
      .when({ type: 'ExpireDeadlines' }, { nowMs: DEADLINE + 1 })
      .then([]);
    given(history)
      .when({ type: 'ExpireDeadlines' }, { nowMs: NEW_AT + settings.publishTimeoutMs })
      .then([released('u-1', 3, 'publish_timeout', 'ms-new')]);
  });

  it('the current session is still stopped by its own events', () => {
    given(history, publishing('u-1', 3, { session: 'ms-new', eventTimeMs: NEW_AT + 10 }))
      .when(rtc('RtcAudioStopped', 'u-1', now, 'ms-new'), { nowMs: now })
      .then([released('u-1', 3, 'audio_stopped', 'ms-new', now)]);
  });
});

describe('Mic: stale and out-of-order RTC events are no-ops, never errors', () => {
  it('without a session id, a stop or exit before the first RTC event of the session is dropped', () => {
    // It may belong to an earlier session, whatever its time; the publish timeout decides.
    const g = given(activeRoom(), ...onSeat('u-1', 3, { at: T0 }));
    for (const time of [T0 - 1, T0 + 500, T0 + 60_000]) {
      g.when(rtc('RtcAudioStopped', 'u-1', time)).then([]);
      g.when(rtc('RtcRoomExited', 'u-1', time)).then([]);
    }
    const p = given(activeRoom(), ...publishingOnSeat('u-1', 3, { at: T0 }));
    for (const type of ['RtcAudioStopped', 'RtcRoomExited'] as const) {
      p.when(rtc(type, 'u-1', T0 + 99)).then([]);
    }
  });

  it('events older than the last applied publish event are dropped', () => {
    // audio_started at T0 + 500 was applied; a stop stamped T0 + 400 arrives after it.
    const g = given(activeRoom(), ...publishingOnSeat('u-1', 3, { eventTimeMs: T0 + 500 }));
    g.when(rtc('RtcAudioStopped', 'u-1', T0 + 400, 'ms-u-1')).then([]);
    g.when(rtc('RtcRoomExited', 'u-1', T0 + 400)).then([]);
    g.when(rtc('RtcAudioStopped', 'u-1', T0 + 500)).then([
      released('u-1', 3, 'audio_stopped', 'ms-u-1', T0 + 500),
    ]);
  });

  it('an older audio_started after a move does not confirm the new seat', () => {
    given(activeRoom(), ...publishingOnSeat('u-1', 3, { eventTimeMs: T0 + 500 }), {
      type: 'MicSeatChanged',
      user_id: 'u-1',
      from_seat_index: 3,
      seat_index: 6,
      mic_session_id: 'ms-u-1',
      publish_deadline_ms: NOW + settings.publishTimeoutMs,
    })
      .when(rtc('RtcAudioStarted', 'u-1', T0 + 499, 'ms-u-1'))
      .then([]);
  });

  it('RTC events about users without a seat, in the room or not, are no-ops', () => {
    const g = given(activeRoom(), joined('u-1'));
    for (const user of ['u-1', 'u-nobody']) {
      for (const type of ['RtcAudioStarted', 'RtcAudioStopped', 'RtcRoomExited'] as const) {
        g.when(rtc(type, user, NOW)).then([]);
        g.when(rtc(type, user, NOW, 'ms-7')).then([]);
      }
    }
  });
});

describe('Mic: RTC room_exited', () => {
  it('frees only the current seat; the business presence stays', () => {
    const cases = [
      { events: onSeat('u-1', 3), session: 'ms-u-1' },
      { events: publishingOnSeat('u-1', 3), session: undefined },
      { events: publishingOnSeat('u-1', 3), session: 'ms-u-1' },
    ];
    for (const { events, session } of cases) {
      const state = given(activeRoom(), joined('u-2'), ...onSeat('u-3', 4), events)
        .when(rtc('RtcRoomExited', 'u-1', T0 + 1_000, session))
        .then([released('u-1', 3, 'room_exited', 'ms-u-1', T0 + 1_000)]);
      assert.equal(presenceOf(state, 'u-1')?.state, 'present');
      assert.equal(seat(state, 3).user_id, null);
      assert.equal(seat(state, 4).user_id, 'u-3');
    }
  });

  it('an old exit cannot free the seat of the new session after a rejoin', () => {
    // Session A from T0; the user left at T0 + 1000, rejoined at T0 + 3000, took seat 5 at
    // T0 + 3500 (session B). RTC reports the first exit (T0 + 900) only now.
    const history = [
      ...activeRoom(),
      ...publishingOnSeat('u-1', 3, { session: 'ms-a' }),
      released('u-1', 3, 'leave', 'ms-a'),
      left('u-1', T0 + 1_000),
      joined('u-1', T0 + 3_000),
      micTakenUp('u-1', 5, { session: 'ms-b', at: T0 + 3_500, version: 30 }),
    ];
    const g = given(history);
    const now = T0 + 4_000;
    g.when(rtc('RtcRoomExited', 'u-1', T0 + 900), { nowMs: now }).then([]);
    g.when(rtc('RtcRoomExited', 'u-1', T0 + 900, 'ms-a'), { nowMs: now }).then([]);
    g.when(rtc('RtcRoomExited', 'u-1', T0 + 3_200), { nowMs: now }).then([]);
    g.when(rtc('RtcRoomExited', 'u-1', now, 'ms-a'), { nowMs: now }).then([]);
    // Without a session id, no exit can be told from A's before B saw an RTC event: B is
    // left to its publish timeout. An exit naming B frees it.
    g.when(rtc('RtcRoomExited', 'u-1', now), { nowMs: now }).then([]);
    g.when(rtc('RtcRoomExited', 'u-1', now, 'ms-b'), { nowMs: now }).then([
      released('u-1', 5, 'room_exited', 'ms-b', now),
    ]);
    // Once B's audio_started is applied, an exit not older than it frees B.
    const anchored = given(history, publishing('u-1', 5, { session: 'ms-b', eventTimeMs: now }));
    anchored.when(rtc('RtcRoomExited', 'u-1', T0 + 900), { nowMs: now }).then([]);
    anchored
      .when(rtc('RtcRoomExited', 'u-1', now), { nowMs: now })
      .then([released('u-1', 5, 'room_exited', 'ms-b', now)]);
  });

  it('never errors, whatever the state', () => {
    for (const events of [[], activeRoom(), [...activeRoom(), closed()]]) {
      const result = given(events).when(rtc('RtcRoomExited', 'u-1', 0, 'x')).result;
      assert.ok(!isDomainError(result));
      assert.deepEqual(result, []);
    }
  });
});
