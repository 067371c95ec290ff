/**
 * The host's controls beyond the seed: the lock (no new joins, the members in stay, the
 * host may come back) and mute-all (every other active member muted with the host as
 * actor; optionally nobody unmutes themselves until the host allows it).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { audioHeld } from './decide-controls.js';
import {
  ended,
  fold,
  given,
  HOST,
  join,
  left,
  meetingWith,
  NOW,
} from './testing/given-when-then.js';
import type { MeetingCommand, MeetingEvent } from './types.js';
import { meetingView } from './view.js';

const lock = (locked: boolean, operator_user_id = HOST): MeetingCommand => ({
  type: 'LockMeeting',
  operator_user_id,
  locked,
});
const muteAll = (allow_unmute: boolean, operator_user_id = HOST): MeetingCommand => ({
  type: 'MuteAll',
  operator_user_id,
  allow_unmute,
});
const allow = (allowed: boolean, operator_user_id = HOST): MeetingCommand => ({
  type: 'AllowSelfUnmute',
  operator_user_id,
  allowed,
});
const locked = (value: boolean): MeetingEvent => ({
  type: 'MeetingLocked',
  locked: value,
  actor_id: HOST,
  at_ms: NOW,
});
const unmuteSet = (allowed: boolean): MeetingEvent => ({
  type: 'SelfUnmuteSet',
  allowed,
  actor_id: HOST,
  at_ms: NOW,
});
const mutedBy = (user_id: string, actor_id = HOST): MeetingEvent => ({
  type: 'MemberStateChanged',
  user_id,
  actor_id,
  audio_enabled: false,
  at_ms: NOW,
});
/** Members join muted: these turned their microphone on. */
const audioOn = (...users: string[]): MeetingEvent[] =>
  users.map((user_id) => ({
    type: 'MemberStateChanged',
    user_id,
    actor_id: user_id,
    audio_enabled: true,
    at_ms: NOW - 1,
  }));
const unmute = (user_id: string, target_user_id?: string): MeetingCommand => ({
  type: 'ChangeMemberState',
  user_id,
  ...(target_user_id ? { target_user_id } : {}),
  audio_enabled: true,
});

describe('LockMeeting', () => {
  it('locks: nobody new joins, the members in stay, the host comes back; unlock lets them in', () => {
    const state = given(meetingWith(['u-1']))
      .when(lock(true))
      .then([locked(true)]);
    assert.deepEqual(meetingView(state).settings, { locked: true });
    given(meetingWith(['u-1']), locked(true))
      .when(join('u-2'))
      .thenError('MEETING_LOCKED');
    given(meetingWith(['u-1']), locked(true), left('u-1'))
      .when(join('u-1'))
      .thenError('MEETING_LOCKED');
    const hostBack = given(meetingWith(['u-1']), locked(true), left(HOST)).when(join(HOST)).result;
    assert.ok(Array.isArray(hostBack) && hostBack.some((e) => e.type === 'MemberJoined'));
    given(meetingWith(['u-1']), locked(true))
      .when(lock(false))
      .then([locked(false)]);
    given(meetingWith(['u-1']), locked(true), locked(false))
      .when(join('u-2'))
      .then(given(meetingWith(['u-1'])).when(join('u-2')).result as MeetingEvent[]);
  });

  it('is the host’s, in a meeting in progress; the same again changes nothing', () => {
    given(meetingWith(['u-1']))
      .when(lock(true, 'u-1'))
      .thenError('HOST_ONLY');
    given(meetingWith(['u-1']), ended('host_ended'))
      .when(lock(true))
      .thenError('MEETING_ENDED');
    given(meetingWith(['u-1']), locked(true))
      .when(lock(true))
      .then([]);
    given(meetingWith(['u-1']))
      .when(lock(false))
      .then([]);
  });
});

describe('MuteAll', () => {
  it('mutes every other active member who has audio, the host as actor', () => {
    given(meetingWith(['u-1', 'u-2', 'u-3']), audioOn(HOST, 'u-1', 'u-3'), left('u-3'))
      .when(muteAll(true))
      .then([mutedBy('u-1')]);
  });

  it('with allow_unmute false: members stay muted until the host allows it', () => {
    const state = given(meetingWith(['u-1']), audioOn('u-1'))
      .when(muteAll(false))
      .then([mutedBy('u-1'), unmuteSet(false)]);
    assert.deepEqual(meetingView(state).settings, { unmute_allowed: false });
    const blocked = [...meetingWith(['u-1', 'u-2']), unmuteSet(false)];
    given(blocked).when(unmute('u-1')).thenError('SELF_UNMUTE_BLOCKED');
    // Muting oneself, video and the hand stay free; the host unmutes anyone.
    given(blocked)
      .when({ type: 'ChangeMemberState', user_id: 'u-2', hand_raised: true })
      .then([
        {
          type: 'MemberStateChanged',
          user_id: 'u-2',
          actor_id: 'u-2',
          hand_raised: true,
          at_ms: NOW,
        },
      ]);
    given(blocked)
      .when(unmute(HOST, 'u-1'))
      .then([
        {
          type: 'MemberStateChanged',
          user_id: 'u-1',
          actor_id: HOST,
          audio_enabled: true,
          at_ms: NOW,
        },
      ]);
    given(blocked)
      .when(allow(true))
      .then([unmuteSet(true)]);
    given(blocked, unmuteSet(true))
      .when(unmute('u-1'))
      .then([
        {
          type: 'MemberStateChanged',
          user_id: 'u-1',
          actor_id: 'u-1',
          audio_enabled: true,
          at_ms: NOW,
        },
      ]);
    // A mute-all that allows unmuting lifts the block too.
    given(blocked, audioOn('u-2'))
      .when(muteAll(true))
      .then([mutedBy('u-2'), unmuteSet(true)]);
  });

  it('is the host’s only', () => {
    given(meetingWith(['u-1']))
      .when(muteAll(true, 'u-1'))
      .thenError('HOST_ONLY');
    given(meetingWith(['u-1']))
      .when(allow(false, 'u-1'))
      .thenError('HOST_ONLY');
    given(meetingWith(['u-1']))
      .when(allow(true))
      .then([]);
  });
});

describe('audioHeld (the media server pauses the member’s audio)', () => {
  it('holds a muted member while self-unmute is blocked, never the host', () => {
    const blocked = [...meetingWith(['u-1', 'u-2']), ...audioOn(HOST, 'u-2'), unmuteSet(false)];
    const held = (events: MeetingEvent[], user: string) => audioHeld(fold(events), user);
    assert.equal(held(blocked, 'u-1'), true, 'muted and blocked');
    assert.equal(held(blocked, 'u-2'), false, 'the host left u-2 unmuted');
    assert.equal(held(blocked, HOST), false, 'the host unmutes themselves');
    assert.equal(held([...blocked, mutedBy('u-2')], 'u-2'), true);
    assert.equal(held([...blocked, ...audioOn('u-1')], 'u-1'), false, 'unmuted by the host');
    assert.equal(held([...blocked, unmuteSet(true)], 'u-1'), false, 'allowed again');
    assert.equal(held([...blocked, left('u-1')], 'u-1'), false, 'not a member');
    assert.equal(held(meetingWith(['u-1']), 'u-1'), false, 'muted but free to unmute');
  });
});
