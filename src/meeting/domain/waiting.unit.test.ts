/**
 * The waiting room: joins wait for the host, who admits (with capacity and the
 * single-meeting rule judged then) or denies each, or all; a wait ends when left, expired
 * or when the meeting ends; the host comes straight in.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EXPIRE,
  HOST,
  NOW,
  T0,
  fold,
  given,
  join,
  joined,
  leave,
  left,
  meetingWith,
  participantIdOf,
  settings,
} from './testing/given-when-then.js';
import { nextMeetingDeadline } from './decide.js';
import type { MeetingCommand, MeetingEvent, WaitingLeftReason } from './types.js';
import { replyOf } from './view.js';

const roomOn = (actor_id = HOST, at_ms = T0): MeetingEvent => ({
  type: 'WaitingRoomSet',
  enabled: true,
  actor_id,
  at_ms,
});
const waits = (user_id: string, at_ms = T0, host_id = HOST): MeetingEvent => ({
  type: 'WaitingJoined',
  user_id,
  participant_id: participantIdOf(user_id),
  host_id,
  deadline_ms: at_ms + settings.waitingTtlMs,
  at_ms,
});
const waitLeft = (user_id: string, reason: WaitingLeftReason): MeetingEvent => ({
  type: 'WaitingLeft',
  user_id,
  reason,
  host_id: HOST,
  at_ms: NOW,
});
const admitted = (user_id: string, join_seq: number): MeetingEvent[] => [
  { type: 'WaitingAdmitted', user_id, actor_id: HOST, at_ms: NOW },
  joined(user_id, join_seq, NOW),
];
const admit = (
  user_id: string | null,
  inOther: string[] = [],
  operator_user_id = HOST,
): MeetingCommand => ({
  type: 'AdmitWaiting',
  operator_user_id,
  user_id,
  in_other_meeting_user_ids: inOther,
});
const deny = (user_id: string | null, operator_user_id = HOST): MeetingCommand => ({
  type: 'DenyWaiting',
  operator_user_id,
  user_id,
});

const typesOf = (when: { result: unknown }) => (when.result as MeetingEvent[]).map((e) => e.type);

describe('the waiting room', () => {
  it('makes a join wait for the host; its retry waits once; the host comes straight in', () => {
    const on = [...meetingWith(['u-1']), roomOn()];
    const state = given(on)
      .when(join('u-2'))
      .then([waits('u-2', NOW)]);
    const reply = replyOf(state, join('u-2'), [waits('u-2', NOW)]) as { participant: unknown };
    assert.equal(reply.participant, null, 'not a participant while waiting');
    given(on, waits('u-2')).when(join('u-2')).then([]);
    given(on, left(HOST), { type: 'HostChanged', old_host_id: HOST, new_host_id: 'u-1', at_ms: T0 })
      .when(join('u-3'))
      .then([waits('u-3', NOW, 'u-1')]);
    // The seed's earlier checks still come first: one meeting at a time, the lock.
    given(on)
      .when(join('u-2', { other: true }))
      .thenError('IN_OTHER_MEETING');
    given(on, { type: 'MeetingLocked', locked: true, actor_id: HOST, at_ms: T0 })
      .when(join('u-2'))
      .thenError('MEETING_LOCKED');
  });

  it('admits one with the seed’s rules then: capacity and the single-meeting rule', () => {
    const full = [...meetingWith(['u-1'], { max: 2 }), roomOn(), waits('u-2')];
    given(full).when(admit('u-2')).thenError('MEETING_FULL');
    const room = [...meetingWith(['u-1']), roomOn(), waits('u-2')];
    // A user admitted while already in another meeting is refused, and keeps waiting.
    given(room)
      .when(admit('u-2', ['u-2']))
      .thenError('IN_OTHER_MEETING');
    const state = given(room).when(admit('u-2')).then(admitted('u-2', 3));
    assert.equal(state.waiting?.length, 0);
    assert.equal(state.participants.find((p) => p.user_id === 'u-2')?.left_at_ms, null);
    given(room).when(admit('u-9')).thenError('NOT_WAITING');
    given(room)
      .when(admit('u-2', [], 'u-1'))
      .thenError('HOST_ONLY');
  });

  it('admits all in the order they came, up to capacity, skipping those in another meeting', () => {
    const queue = [
      ...meetingWith([], { max: 3 }),
      roomOn(),
      waits('u-1'),
      waits('u-2'),
      waits('u-3'),
    ];
    const state = given(queue)
      .when(admit(null, ['u-1']))
      .then([...admitted('u-2', 2), ...admitted('u-3', 3)]);
    assert.deepEqual(
      state.waiting?.map((w) => w.user_id),
      ['u-1'],
      'the one in another meeting keeps waiting',
    );
    given([...meetingWith([]), roomOn()])
      .when(admit(null))
      .then([]);
  });

  it('a former member admitted again reuses its row', () => {
    const back = [...meetingWith(['u-1']), left('u-1'), roomOn(), waits('u-1')];
    const [, joinedAgain] = given(back).when(admit('u-1')).result as MeetingEvent[];
    assert.equal((joinedAgain as { rejoined: boolean }).rejoined, true);
  });

  it('denies one or all; a wait ends when left, when it expires, when the meeting ends', () => {
    const queue = [...meetingWith([]), roomOn(), waits('u-1'), waits('u-2')];
    given(queue)
      .when(deny('u-2'))
      .then([waitLeft('u-2', 'denied')]);
    given(queue)
      .when(deny(null))
      .then([waitLeft('u-1', 'denied'), waitLeft('u-2', 'denied')]);
    given(queue).when(deny('u-1', 'u-2')).thenError('HOST_ONLY');
    given(queue)
      .when(leave('u-1'))
      .then([waitLeft('u-1', 'left')]);
    assert.deepEqual(typesOf(given(queue).when({ type: 'EndMeeting', operator_user_id: HOST })), [
      'MemberLeft',
      'WaitingLeft',
      'WaitingLeft',
      'MeetingEnded',
    ]);
    const deadline = T0 + settings.waitingTtlMs;
    assert.equal(nextMeetingDeadline(fold(queue), settings), deadline);
    given(queue)
      .when(EXPIRE, { nowMs: deadline })
      .then([
        { ...waitLeft('u-1', 'expired'), at_ms: deadline },
        { ...waitLeft('u-2', 'expired'), at_ms: deadline },
      ]);
  });

  it('is the host’s to turn on and off; the same again changes nothing', () => {
    given(meetingWith(['u-1']))
      .when({ type: 'SetWaitingRoom', operator_user_id: HOST, enabled: true })
      .then([{ ...roomOn(), at_ms: NOW }]);
    given(meetingWith(['u-1']), roomOn())
      .when({ type: 'SetWaitingRoom', operator_user_id: HOST, enabled: true })
      .then([]);
    given(meetingWith(['u-1']))
      .when({ type: 'SetWaitingRoom', operator_user_id: 'u-1', enabled: true })
      .thenError('HOST_ONLY');
    // Off again: new joins come straight in.
    const off: MeetingEvent = { type: 'WaitingRoomSet', enabled: false, actor_id: HOST, at_ms: T0 };
    assert.deepEqual(typesOf(given(meetingWith([]), roomOn(), off).when(join('u-1'))), [
      'MemberJoined',
    ]);
  });
});
