/**
 * RTC staleness never compares two clocks. MicUp, deadlines and client confirmations run on
 * the server's clock; an RTC callback's `event_time_ms` is the RTC provider's (TRTC's
 * EventMsTs, or EventTs in whole seconds), which may run ahead of or behind the server's.
 * These tests skew the RTC clock both ways and check that a genuine event of the current
 * session applies, and that a late event of an earlier session never touches the new one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evolveVoiceRoom } from './evolve.js';
import { voiceRoomDomain } from './domain.js';
import {
  activeRoom,
  anchored,
  fold,
  given,
  givenState,
  joined,
  left,
  micTakenUp,
  onSeat,
  publishing,
  released,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from './types.js';

type RtcType = 'RtcAudioStarted' | 'RtcAudioStopped' | 'RtcRoomExited';
const rtc = (
  type: RtcType,
  event_time_ms: number,
  mic_session_id?: string,
  user_id = 'u-1',
): VoiceRoomCommand =>
  mic_session_id === undefined
    ? { type, user_id, event_time_ms }
    : { type, user_id, event_time_ms, mic_session_id };
const confirm = (mic_session_id: string): VoiceRoomCommand => ({
  type: 'ConfirmMicPublishing',
  user_id: 'u-1',
  mic_session_id,
});
const seat3 = (state: VoiceRoomState) => state.seats[3]!;

describe('RTC clock behind the server: a genuine audio_started applies', () => {
  // MicUp at server time UP; the RTC clock runs behind (or reports whole seconds).
  const UP = T0 + 1_500;
  const history = [...activeRoom(), ...onSeat('u-1', 3, { at: UP })];
  const now = UP + 300;

  for (const behind of [100, 1_000]) {
    it(`stamped ${behind} ms before the MicUp's server time, with or without session id`, () => {
      for (const session of [undefined, 'ms-u-1']) {
        const state = given(history)
          .when(rtc('RtcAudioStarted', UP - behind, session), { nowMs: now })
          .then([publishing('u-1', 3, { eventTimeMs: UP - behind })]);
        assert.equal(seat3(state).state, 'publishing');
        // ... so the publish timeout no longer takes the publishing user off.
        const deadline = UP + settings.publishTimeoutMs;
        given(history, publishing('u-1', 3, { eventTimeMs: UP - behind }))
          .when({ type: 'ExpireDeadlines' }, { nowMs: deadline })
          .then([]);
      }
    });
  }

  it('whole-second EventTs: a start and a stop in the same second both apply', () => {
    const second = Math.floor(UP / 1_000) * 1_000; // before UP on the server's clock
    const state = given(history)
      .when(rtc('RtcAudioStarted', second), { nowMs: now })
      .then([publishing('u-1', 3, { eventTimeMs: second })]);
    givenState(state)
      .when(rtc('RtcAudioStopped', second), { nowMs: now + 200 })
      .then([released('u-1', 3, 'audio_stopped', 'ms-u-1', second)]);
  });
});

describe('RTC clock ahead of the server: late events of an earlier session', () => {
  // The RTC clock runs 10 s ahead. Session A (seat 3) started at server T0, its audio
  // started at RTC T0 + 10_100 and stopped at RTC T0 + 15_000 (both applied). The user
  // then took seat 3 again at server T0 + 6_000 (session B): A's late events carry RTC times
  // after B's server start time.
  const B_AT = T0 + 6_000;
  const sessionA = [
    ...activeRoom(),
    ...onSeat('u-1', 3, { session: 'ms-a' }),
    publishing('u-1', 3, { session: 'ms-a', eventTimeMs: T0 + 10_100 }),
    released('u-1', 3, 'audio_stopped', 'ms-a', T0 + 15_000),
  ];
  const pendingB = [...sessionA, micTakenUp('u-1', 3, { session: 'ms-b', at: B_AT, version: 20 })];
  const now = B_AT + 500;

  it("a late audio_started of A (older than A's applied stop) does not confirm B", () => {
    const g = given(pendingB);
    g.when(rtc('RtcAudioStarted', T0 + 12_000), { nowMs: now }).then([]);
    g.when(rtc('RtcAudioStarted', T0 + 15_000), { nowMs: now }).then([]);
    g.when(rtc('RtcAudioStarted', T0 + 12_000, 'ms-a'), { nowMs: now }).then([]);
    // B's own start, newer than everything applied for the user, does.
    g.when(rtc('RtcAudioStarted', T0 + 16_500), { nowMs: now }).then([
      publishing('u-1', 3, { session: 'ms-b', eventTimeMs: T0 + 16_500 }),
    ]);
  });

  it('a late audio_stopped or room_exited of A never ends B', () => {
    const clientConfirmedB = [
      ...pendingB,
      publishing('u-1', 3, { session: 'ms-b', source: 'client', atMs: B_AT + 200 }),
    ];
    for (const events of [pendingB, clientConfirmedB]) {
      const g = given(events);
      for (const type of ['RtcAudioStopped', 'RtcRoomExited'] as const) {
        for (const time of [T0 + 14_000, T0 + 15_500, T0 + 20_000]) {
          g.when(rtc(type, time), { nowMs: now }).then([]);
          g.when(rtc(type, time, 'ms-a'), { nowMs: now }).then([]);
        }
      }
    }
    // With B's audio_started applied, A's stop (older) is dropped and B's own stop applies.
    const publishingB = given(
      pendingB,
      publishing('u-1', 3, { session: 'ms-b', eventTimeMs: T0 + 16_500 }),
    );
    publishingB.when(rtc('RtcAudioStopped', T0 + 16_000), { nowMs: now }).then([]);
    publishingB
      .when(rtc('RtcAudioStopped', T0 + 17_000), { nowMs: now })
      .then([released('u-1', 3, 'audio_stopped', 'ms-b', T0 + 17_000)]);
  });

  it('a late room_exited of the earlier session, stamped after the new MicUp, keeps the new one', () => {
    // A was left through LeaveRoom (server clock) with no RTC stop applied; RTC, 3 s ahead,
    // stamps A's exit T0 + 4_000, after B's MicUp at server T0 + 2_500.
    const history = [
      ...activeRoom(),
      ...onSeat('u-1', 3, { session: 'ms-a' }),
      publishing('u-1', 3, { session: 'ms-a', eventTimeMs: T0 + 3_100 }),
      released('u-1', 3, 'leave', 'ms-a'),
      left('u-1', T0 + 1_000),
      joined('u-1', T0 + 2_000),
      micTakenUp('u-1', 3, { session: 'ms-b', at: T0 + 2_500, version: 30 }),
    ];
    const g = given(history);
    g.when(rtc('RtcRoomExited', T0 + 4_000), { nowMs: T0 + 3_000 }).then([]);
    given(history, publishing('u-1', 3, { session: 'ms-b', source: 'client', atMs: T0 + 2_700 }))
      .when(rtc('RtcRoomExited', T0 + 4_000), { nowMs: T0 + 3_000 })
      .then([]);
    // B is then left to its publish timeout (server clock), as any unconfirmed seat.
    g.when({ type: 'ExpireDeadlines' }, { nowMs: T0 + 2_500 + settings.publishTimeoutMs }).then([
      released('u-1', 3, 'publish_timeout', 'ms-b'),
    ]);
  });
});

describe('client confirmation writes no server time into RTC fields', () => {
  const history = [...activeRoom(), ...onSeat('u-1', 3, { at: T0 })];

  it('the event carries the server time as at_ms; the seat keeps no RTC anchor', () => {
    const state = given(history)
      .when(confirm('ms-u-1'), { nowMs: T0 + 2_000 })
      .then([publishing('u-1', 3, { source: 'client', atMs: T0 + 2_000 })]);
    assert.equal(seat3(state).last_publish_event_time_ms, null);
    assert.deepEqual(state.last_rtc_event_time_ms, {});
  });

  it("RTC's audio_started after the client's confirm anchors the session, even stamped earlier", () => {
    // RTC 2 s behind: its audio_started (RTC T0 + 500) arrives after the confirm (server T0 + 2_000).
    const confirmed = [...history, publishing('u-1', 3, { source: 'client', atMs: T0 + 2_000 })];
    const state = given(confirmed)
      .when(rtc('RtcAudioStarted', T0 + 500), { nowMs: T0 + 2_100 })
      .then([anchored('u-1', 3, T0 + 500)]);
    assert.equal(seat3(state).state, 'publishing');
    assert.equal(seat3(state).last_publish_event_time_ms, T0 + 500);
    // Now a stop without session id, not older than the anchor, ends the session.
    givenState(state)
      .when(rtc('RtcAudioStopped', T0 + 900), { nowMs: T0 + 2_200 })
      .then([released('u-1', 3, 'audio_stopped', 'ms-u-1', T0 + 900)]);
    // A repeat of that start is a no-op.
    givenState(state)
      .when(rtc('RtcAudioStarted', T0 + 500), { nowMs: T0 + 2_200 })
      .then([]);
  });

  it('the seat goes live once: the RTC start after a confirm is an anchor, not a second confirm', () => {
    const confirmed = [...history, publishing('u-1', 3, { source: 'client', atMs: T0 + 2_000 })];
    for (const session of [undefined, 'ms-u-1']) {
      const before = fold(confirmed);
      const state = given(confirmed)
        .when(rtc('RtcAudioStarted', T0 + 500, session), { nowMs: T0 + 2_100 })
        .then([anchored('u-1', 3, T0 + 500)]);
      // Nothing but the RTC clock moved: the seat was live already.
      assert.deepEqual(
        { ...state, seats: state.seats.map((s) => ({ ...s, last_publish_event_time_ms: null })) },
        { ...before, last_rtc_event_time_ms: { 'u-1': T0 + 500 } },
      );
      // Neither webhooks nor frames hear of it.
      assert.equal(voiceRoomDomain().toOutbox?.(anchored('u-1', 3, T0 + 500)), null);
      // A later start of the same session, even newer, changes nothing more.
      givenState(state)
        .when(rtc('RtcAudioStarted', T0 + 800, session), { nowMs: T0 + 2_300 })
        .then([]);
    }
  });

  it('an old log with a second (RTC) MicPublishingConfirmed replays to the anchored state', () => {
    const confirmed = [...history, publishing('u-1', 3, { source: 'client', atMs: T0 + 2_000 })];
    const oldLog = fold([...confirmed, publishing('u-1', 3, { eventTimeMs: T0 + 500 })]);
    const newLog = fold([...confirmed, anchored('u-1', 3, T0 + 500)]);
    assert.deepEqual(oldLog, newLog);
    // And a snapshot taken from the old log decides the same afterwards.
    givenState(JSON.parse(JSON.stringify(oldLog)) as VoiceRoomState)
      .when(rtc('RtcAudioStopped', T0 + 900), { nowMs: T0 + 2_200 })
      .then([released('u-1', 3, 'audio_stopped', 'ms-u-1', T0 + 900)]);
  });

  it('a client-confirmed seat is ended by a stop that names its session', () => {
    given(history, publishing('u-1', 3, { source: 'client', atMs: T0 + 2_000 }))
      .when(rtc('RtcAudioStopped', T0 + 10, 'ms-u-1'), { nowMs: T0 + 2_100 })
      .then([released('u-1', 3, 'audio_stopped', 'ms-u-1', T0 + 10)]);
  });
});

describe('events naming their session compare only with that session', () => {
  it("a named start applies though older than the user's earlier sessions' RTC events", () => {
    const history = [
      ...activeRoom(),
      ...onSeat('u-1', 3, { session: 'ms-a' }),
      publishing('u-1', 3, { session: 'ms-a', eventTimeMs: T0 + 50_000 }),
      released('u-1', 3, 'mic_down', 'ms-a'),
      micTakenUp('u-1', 3, { session: 'ms-b', at: T0 + 2_000, version: 20 }),
    ];
    const g = given(history);
    g.when(rtc('RtcAudioStarted', T0 + 1_000), { nowMs: T0 + 2_500 }).then([]);
    g.when(rtc('RtcAudioStarted', T0 + 1_000, 'ms-b'), { nowMs: T0 + 2_500 }).then([
      publishing('u-1', 3, { session: 'ms-b', eventTimeMs: T0 + 1_000 }),
    ]);
  });

  it("the RTC times applied for one user never affect another's session", () => {
    const history = [
      ...activeRoom(),
      ...onSeat('u-2', 2),
      publishing('u-2', 2, { eventTimeMs: T0 + 90_000 }),
      ...onSeat('u-1', 3),
    ];
    given(history)
      .when(rtc('RtcAudioStarted', T0 + 100), { nowMs: T0 + 500 })
      .then([publishing('u-1', 3, { eventTimeMs: T0 + 100 })]);
  });
});

describe('old snapshots and logs still load', () => {
  it('a snapshot without last_rtc_event_time_ms and an old client confirm with event_time_ms', () => {
    const oldConfirm = {
      type: 'MicPublishingConfirmed',
      user_id: 'u-1',
      seat_index: 3,
      mic_session_id: 'ms-u-1',
      source: 'client',
      event_time_ms: T0 + 2_000, // server time, as logs written before the fix have it
    } as unknown as VoiceRoomEvent;
    const { last_rtc_event_time_ms: _, ...oldSnapshot } = fold([
      ...activeRoom(),
      ...onSeat('u-1', 3),
    ]);
    const loaded = JSON.parse(JSON.stringify(oldSnapshot)) as VoiceRoomState;
    const state = evolveVoiceRoom(loaded, oldConfirm);
    assert.equal(seat3(state).state, 'publishing');
    assert.equal(seat3(state).last_publish_event_time_ms, null, 'server time is not RTC time');
    const after = givenState(state)
      .when(rtc('RtcAudioStarted', T0 + 100), { nowMs: T0 + 2_500 })
      .then([anchored('u-1', 3, T0 + 100)]);
    assert.deepEqual(after.last_rtc_event_time_ms, { 'u-1': T0 + 100 });
    givenState(loaded)
      .when(rtc('RtcRoomExited', T0 + 100, 'ms-u-1'))
      .then([released('u-1', 3, 'room_exited', 'ms-u-1', T0 + 100)]);
  });

  it('the user id `__proto__` is an ordinary key of the RTC times', () => {
    const state = given(activeRoom(), ...onSeat('__proto__', 3))
      .when(rtc('RtcAudioStarted', T0 + 100, undefined, '__proto__'))
      .then([publishing('__proto__', 3, { eventTimeMs: T0 + 100 })]);
    assert.ok(Object.hasOwn(state.last_rtc_event_time_ms!, '__proto__'));
    assert.equal(Object.getPrototypeOf(state.last_rtc_event_time_ms), Object.prototype);
    const viaJson = JSON.parse(JSON.stringify(state)) as VoiceRoomState;
    assert.deepEqual(viaJson, state);
  });
});
