/**
 * POST /rooms/:code/join and /leave (meeting-api.md §4, §5): the check order 房间存在 → 未结束
 * → 单点参会 → 密码锁定 → 密码校验 → 容量, first join vs re-join (the row is reused), the
 * capacity boundary, the automatic host transfer to the earliest-joined active member, and
 * the empty TTL that starts (but does not end the meeting) when the last member leaves.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { participantOf } from './evolve.js';
import {
  created,
  emptyTtlStarted,
  ended,
  given,
  HASH,
  HOST,
  hostChanged,
  join,
  joined,
  leave,
  left,
  meetingWith,
  NOW,
  settings,
  T0,
} from './testing/given-when-then.js';
import { replyOf } from './view.js';

describe('JoinMeeting', () => {
  it('first join: a new row, role 0 参会者, joined_at=now', () => {
    const state = given(created())
      .when(join('u-1'))
      .then([joined('u-1', 2, NOW)]);
    const reply = replyOf(state, join('u-1'), []) as {
      participant: { id: string; role: number; role_label: string; is_active: boolean };
      room: { online_count: number };
    };
    assert.equal(reply.participant.id, 'p-u-1');
    assert.equal(reply.participant.role, 0);
    assert.equal(reply.participant.role_label, '参会者');
    assert.equal(reply.participant.is_active, true);
    assert.equal(reply.room.online_count, 2);
  });

  it('re-join after leaving reuses the row: same id, left_at=null, joined_at=now, duration=0', () => {
    const history = [...meetingWith(['u-1']), left('u-1', { duration: 7, at: T0 + 8_000 })];
    const later = T0 + 60_000;
    const state = given(history)
      .when(join('u-1', { pid: 'p-fresh' }), { nowMs: later })
      .then([joined('u-1', 3, later, true)]);
    assert.equal(state.participants.length, 2, 'no new row');
    assert.deepEqual(participantOf(state, 'u-1'), {
      participant_id: 'p-u-1',
      user_id: 'u-1',
      joined_at_ms: later,
      left_at_ms: null,
      duration_s: 0,
      left_reason: null,
      join_seq: 3,
      audio_enabled: false,
      video_enabled: false,
      hand_raised: false,
    });
  });

  it('refuses a participant id another row already has', () => {
    given(meetingWith(['u-1']))
      .when(join('u-2', { pid: 'p-u-1' }))
      .thenError('INVALID_ARGUMENT');
  });

  it('会议不存在 before anything else', () => {
    const error = given()
      .when(join('u-1', { other: true }))
      .thenError('MEETING_NOT_FOUND');
    assert.equal(error.kind, 'not_found');
  });

  it('会议已结束 before the single-meeting rule, the password and the capacity', () => {
    given(created({ hash: HASH, max: 2 }), left(HOST), emptyTtlStarted(), ended('empty_ttl'))
      .when(join('u-1', { other: true, password: 'locked' }))
      .thenError('MEETING_ENDED');
  });

  it('你当前已在其他会议中 before the password steps', () => {
    given(created({ hash: HASH }))
      .when(join('u-1', { other: true, password: 'locked' }))
      .thenError('IN_OTHER_MEETING');
  });

  it('你已在会议中 for an active member, before the password (no wrong attempt counted)', () => {
    given(created({ hash: HASH }), joined('u-1', 2))
      .when(join('u-1', { password: 'wrong' }))
      .thenError('ALREADY_IN_MEETING');
    given(created()).when(join(HOST)).thenError('ALREADY_IN_MEETING');
  });

  it('password rooms: lock → missing → wrong in the edge verdict; ok joins', () => {
    const room = created({ hash: HASH });
    assert.equal(
      given(room)
        .when(join('u-1', { password: 'locked' }))
        .thenError('PASSWORD_LOCKED').message,
      '密码尝试过多，请稍后再试',
    );
    assert.equal(
      given(room)
        .when(join('u-1', { password: 'missing' }))
        .thenError('PASSWORD_REQUIRED').message,
      '会议需要密码',
    );
    // A verdict given as if the room had no password does not get in either.
    given(room)
      .when(join('u-1', { password: 'not_required' }))
      .thenError('PASSWORD_REQUIRED');
    assert.equal(
      given(room)
        .when(join('u-1', { password: 'wrong' }))
        .thenError('PASSWORD_WRONG').message,
      '会议密码错误',
    );
    given(room)
      .when(join('u-1', { password: 'ok' }))
      .then([joined('u-1', 2, NOW)]);
  });

  it('the password comes before the capacity: a full password room answers the password', () => {
    given(created({ hash: HASH, max: 2 }), joined('u-1', 2))
      .when(join('u-2', { password: 'wrong' }))
      .thenError('PASSWORD_WRONG');
  });

  it('capacity: the last free place is taken; at exactly max_members 会议已满员', () => {
    const three = meetingWith(['u-1', 'u-2'], { max: 4 });
    const full = given(three)
      .when(join('u-3'))
      .then([joined('u-3', 4, NOW)]);
    const error = given(...three, joined('u-3', 4))
      .when(join('u-4'))
      .thenError('MEETING_FULL');
    assert.equal(error.message, '会议已满员');
    assert.equal(full.participants.filter((p) => p.left_at_ms === null).length, 4);
  });

  it('a place freed by leaving can be taken again', () => {
    given(meetingWith(['u-1'], { max: 2 }), left('u-1'))
      .when(join('u-2'))
      .then([joined('u-2', 3, NOW)]);
  });

  it('the capacity counts active members only, never left rows', () => {
    given(meetingWith(['u-1', 'u-2'], { max: 3 }), left('u-1'), left('u-2'))
      .when(join('u-3'))
      .then([joined('u-3', 4, NOW)]);
  });
});

describe('LeaveMeeting', () => {
  it('a member leaves: left_at=now, duration in whole seconds since joined_at', () => {
    const at = T0 + 1 + 185_999;
    const state = given(meetingWith(['u-1']))
      .when(leave('u-1'), { nowMs: at })
      .then([left('u-1', { duration: 185, at })]);
    assert.equal(participantOf(state, 'u-1')?.left_at_ms, at);
    assert.equal(participantOf(state, 'u-1')?.left_reason, 'leave');
    assert.deepEqual(replyOf(state, leave('u-1'), [left('u-1', { duration: 185, at })]), {
      user_id: 'u-1',
      duration: 185,
    });
  });

  it('a clock behind joined_at gives duration 0, never negative', () => {
    given(meetingWith(['u-1']))
      .when(leave('u-1'), { nowMs: T0 - 5_000 })
      .then([left('u-1', { at: T0 - 5_000 })]);
  });

  it('the host leaving with others: the host moves to the earliest-joined (host_left_with_members)', () => {
    // u-2 joined before u-1 (earlier joined_at), though u-1's row is older.
    const history = [
      ...created(),
      joined('u-1', 2, T0 + 10),
      joined('u-2', 3, T0 + 20),
      left('u-1', { at: T0 + 30 }),
      joined('u-1', 4, T0 + 40, true),
    ];
    const state = given(history)
      .when(leave(HOST))
      .then(
        [left(HOST, { duration: 1 }), hostChanged(HOST, 'u-2', 'host_left_with_members')].map(
          (e) => ({ ...e, at_ms: NOW }),
        ),
      );
    assert.equal(state.host_id, 'u-2');
    assert.equal(state.empty_deadline_ms, null);
  });

  it('equal joined_at: the earlier join wins, deterministically', () => {
    const history = [...created(), joined('u-b', 2, T0 + 5), joined('u-a', 3, T0 + 5)];
    const state = given(history)
      .when(leave(HOST))
      .then([
        { ...left(HOST, { duration: 1 }), at_ms: NOW },
        hostChanged(HOST, 'u-b', 'host_left_with_members'),
      ]);
    assert.equal(state.host_id, 'u-b');
  });

  it('a non-host leaving keeps the host', () => {
    const state = given(meetingWith(['u-1', 'u-2']))
      .when(leave('u-2'))
      .then([{ ...left('u-2'), at_ms: NOW }]);
    assert.equal(state.host_id, HOST);
  });

  it('the last one leaving starts the empty TTL; the meeting is not ended yet', () => {
    const state = given(
      meetingWith(['u-1']),
      left(HOST),
      hostChanged(HOST, 'u-1', 'host_left_with_members', T0),
    )
      .when(leave('u-1'))
      .then([{ ...left('u-1'), at_ms: NOW }, emptyTtlStarted(NOW)]);
    assert.equal(state.status, 1);
    assert.equal(state.empty_deadline_ms, NOW + settings.emptyTtlMs);
    assert.equal(state.host_id, 'u-1', 'the last leaver stays host of the empty meeting');
  });

  it('你当前未在会议中 for someone who left or never joined; 会议已结束 / 会议不存在 first', () => {
    given(meetingWith(['u-1']), left('u-1'))
      .when(leave('u-1'))
      .thenError('NOT_IN_MEETING');
    given(created()).when(leave('u-9')).thenError('NOT_IN_MEETING');
    given(created(), left(HOST), ended('host_ended')).when(leave(HOST)).thenError('MEETING_ENDED');
    given().when(leave(HOST)).thenError('MEETING_NOT_FOUND');
  });
});
