/**
 * The host's REST commands (meeting-api.md §6–§8): end (everyone leaves with host_end, then
 * status 2 host_ended), transfer-host (roles swap) and kick (left_reason kicked), each with
 * its refusals in the seed's order; and the empty meeting revived by a join.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activeParticipants, participantOf } from './evolve.js';
import {
  created,
  emptyTtlStarted,
  ended,
  given,
  HOST,
  hostChanged,
  join,
  joined,
  left,
  meetingWith,
  NOW,
  T0,
} from './testing/given-when-then.js';
import type { MeetingCommand } from './types.js';
import { meetingDetail, replyOf } from './view.js';

const end = (operator_user_id = HOST): MeetingCommand => ({ type: 'EndMeeting', operator_user_id });
const transfer = (target_user_id: string, operator_user_id = HOST): MeetingCommand => ({
  type: 'TransferHost',
  operator_user_id,
  target_user_id,
});
const kick = (target_user_id: string, operator_user_id = HOST): MeetingCommand => ({
  type: 'KickMember',
  operator_user_id,
  target_user_id,
});

describe('EndMeeting', () => {
  it('every active member leaves (host_end), then 已结束 with host_ended', () => {
    const history = [...meetingWith(['u-1', 'u-2']), left('u-2', { at: T0 + 500 })];
    const state = given(history)
      .when(end())
      .then([
        left(HOST, { reason: 'host_end', duration: 1, at: NOW, by: HOST }),
        left('u-1', { reason: 'host_end', duration: 0, at: NOW, by: HOST }),
        ended('host_ended', NOW, HOST),
      ]);
    assert.equal(state.status, 2);
    assert.equal(state.ended_reason, 'host_ended');
    assert.equal(state.ended_at_ms, NOW);
    assert.deepEqual(activeParticipants(state), []);
    assert.equal(participantOf(state, 'u-2')?.left_reason, 'leave', 'earlier leavers untouched');
    const reply = replyOf(state, end(), []) as { room: { status: number; status_label: string } };
    assert.equal(reply.room.status, 2);
    assert.equal(reply.room.status_label, '已结束');
  });

  it('the host of an emptied meeting may end it', () => {
    given(created(), left(HOST), emptyTtlStarted())
      .when(end())
      .then([ended('host_ended', NOW, HOST)]);
  });

  it('仅主持人可操作 (403) for anyone else; 会议已结束 first', () => {
    const error = given(meetingWith(['u-1']))
      .when(end('u-1'))
      .thenError('HOST_ONLY');
    assert.deepEqual(error, { kind: 'forbidden', code: 'HOST_ONLY', message: '仅主持人可操作' });
    given(created(), left(HOST), ended('host_ended')).when(end('u-1')).thenError('MEETING_ENDED');
    given().when(end()).thenError('MEETING_NOT_FOUND');
  });
});

describe('TransferHost', () => {
  it('host_id moves, the roles swap; no auto_reason', () => {
    const state = given(meetingWith(['u-1', 'u-2']))
      .when(transfer('u-2'))
      .then([hostChanged(HOST, 'u-2')]);
    assert.equal(state.host_id, 'u-2');
    const roles = meetingDetail(state).participants.map((p) => [p.user_id, p.role, p.role_label]);
    assert.deepEqual(roles, [
      [HOST, 0, '参会者'],
      ['u-1', 0, '参会者'],
      ['u-2', 1, '主持人'],
    ]);
    assert.deepEqual(replyOf(state, transfer('u-2'), [hostChanged(HOST, 'u-2')]), {
      old_host_id: HOST,
      new_host_id: 'u-2',
    });
  });

  it('the old host has no host rights afterwards', () => {
    given(meetingWith(['u-1', 'u-2']), hostChanged(HOST, 'u-2'))
      .when(transfer('u-1'))
      .thenError('HOST_ONLY');
  });

  it('refusals in order: host only → not self → target active', () => {
    const room = meetingWith(['u-1']);
    given(room).when(transfer(HOST, 'u-1')).thenError('HOST_ONLY');
    given(room).when(transfer('u-gone', 'u-1')).thenError('HOST_ONLY');
    const self = given(room).when(transfer(HOST)).thenError('CANNOT_TRANSFER_TO_SELF');
    assert.equal(self.message, '不能将主持人转让给自己');
    const gone = given(room, left('u-1')).when(transfer('u-1')).thenError('TARGET_NOT_ACTIVE');
    assert.equal(gone.message, '目标用户不是当前活跃参会者');
    given(room).when(transfer('u-never')).thenError('TARGET_NOT_ACTIVE');
    given(created(), left(HOST), ended('host_ended'))
      .when(transfer('u-1'))
      .thenError('MEETING_ENDED');
  });
});

describe('KickMember', () => {
  it('left_at=now, left_reason kicked, by the host; duration in the reply', () => {
    const at = NOW + 9_000;
    const event = left('u-1', { reason: 'kicked', duration: 9, at, by: HOST });
    const state = given(meetingWith(['u-1']))
      .when(kick('u-1'), { nowMs: at })
      .then([event]);
    assert.equal(participantOf(state, 'u-1')?.left_reason, 'kicked');
    assert.equal(state.host_id, HOST);
    assert.deepEqual(replyOf(state, kick('u-1'), [event]), { user_id: 'u-1', duration: 9 });
  });

  it('a kicked member may join again (the row is reused)', () => {
    given(meetingWith(['u-1']), left('u-1', { reason: 'kicked', by: HOST }))
      .when(join('u-1'))
      .then([joined('u-1', 3, NOW, true)]);
  });

  it('refusals in order: host only → not self → target active', () => {
    const room = meetingWith(['u-1', 'u-2']);
    given(room).when(kick('u-2', 'u-1')).thenError('HOST_ONLY');
    given(room).when(kick(HOST, 'u-1')).thenError('HOST_ONLY');
    const self = given(room).when(kick(HOST)).thenError('CANNOT_KICK_SELF');
    assert.equal(self.message, '不能踢自己');
    given(room, left('u-2')).when(kick('u-2')).thenError('TARGET_NOT_ACTIVE');
    given(created(), left(HOST), ended('host_ended')).when(kick('u-1')).thenError('MEETING_ENDED');
    given().when(kick('u-1')).thenError('MEETING_NOT_FOUND');
  });
});

describe('an emptied meeting revived by a join', () => {
  const emptied = [...meetingWith(['u-1']), left('u-1'), left(HOST), emptyTtlStarted()];

  it('someone else joining cancels the TTL and becomes host (empty_room_revived)', () => {
    const state = given(emptied)
      .when(join('u-2'))
      .then([
        { type: 'MeetingRevived', at_ms: NOW },
        joined('u-2', 3, NOW, false, 1),
        hostChanged(HOST, 'u-2', 'empty_room_revived'),
      ]);
    assert.equal(state.empty_deadline_ms, null);
    assert.equal(state.host_id, 'u-2');
  });

  it('the old host joining back is host again without a change', () => {
    const state = given(emptied)
      .when(join(HOST))
      .then([{ type: 'MeetingRevived', at_ms: NOW }, joined(HOST, 3, NOW, true)]);
    assert.equal(state.host_id, HOST);
    assert.equal(meetingDetail(state).participants[0]?.role, 1);
  });
});
