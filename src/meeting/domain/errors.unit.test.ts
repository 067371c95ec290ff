/**
 * The refusal table against the seed's 领域错误码映射 (meeting-api.md): every message of the
 * seed is there, spelled exactly, under its stable code, with a kind the REST envelope maps
 * to the seed's HTTP status. Also the read-side guard of the detail / chat / invite routes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { httpStatusOf } from '../../shared/http-envelope.js';
import { meetingReasons, refuse } from './errors.js';
import { checkMeetingAccess } from './guards.js';
import { created, ended, fold, HOST, left, meetingWith } from './testing/given-when-then.js';

/** The seed's table, copied by hand: HTTP status, message, and the code the edges use. */
const SEED: readonly [number, string, string][] = [
  [404, '会议不存在', 'MEETING_NOT_FOUND'],
  [403, '仅主持人可操作', 'HOST_ONLY'],
  [400, '会议已结束', 'MEETING_ENDED'],
  [400, '会议已满员', 'MEETING_FULL'],
  [400, '会议需要密码', 'PASSWORD_REQUIRED'],
  [400, '会议密码错误', 'PASSWORD_WRONG'],
  [400, '密码尝试过多，请稍后再试', 'PASSWORD_LOCKED'],
  [400, '你当前未在会议中', 'NOT_IN_MEETING'],
  [400, '你已在会议中', 'ALREADY_IN_MEETING'],
  [400, '你当前已在其他会议中', 'IN_OTHER_MEETING'],
  [400, '邀请链接已失效', 'INVITE_EXPIRED'],
  [400, '会议号冲突，请重试', 'ROOM_CODE_CONFLICT'],
  [400, '不能踢自己', 'CANNOT_KICK_SELF'],
  [400, '不能将主持人转让给自己', 'CANNOT_TRANSFER_TO_SELF'],
  [400, '目标用户不是当前活跃参会者', 'TARGET_NOT_ACTIVE'],
];

describe('meeting refusals', () => {
  it('every seed message is in the table under its code, with the seed’s HTTP status', () => {
    for (const [status, message, code] of SEED) {
      const row = meetingReasons.find((r) => r.code === code);
      assert.ok(row, `${code} is in the table`);
      assert.equal(row.message, message, code);
      assert.equal(httpStatusOf(row.kind), status, `${code} → ${status}`);
    }
  });

  it('the WebSocket host check has its own text, 仅主持人可执行此操作, and is forbidden', () => {
    const row = meetingReasons.find((r) => r.code === 'HOST_ONLY_WS');
    assert.deepEqual(row, {
      code: 'HOST_ONLY_WS',
      kind: 'forbidden',
      message: '仅主持人可执行此操作',
    });
  });

  it('codes and messages are unique; refuse() returns the message exactly', () => {
    assert.equal(new Set(meetingReasons.map((r) => r.code)).size, meetingReasons.length);
    assert.equal(new Set(meetingReasons.map((r) => r.message)).size, meetingReasons.length);
    for (const [, message, code] of SEED) {
      const error = refuse(code as Parameters<typeof refuse>[0]);
      assert.equal(error.message, message);
      assert.equal(error.code, code);
    }
  });
});

describe('checkMeetingAccess (detail, chats, invite)', () => {
  it('an active participant passes; 会议不存在 / 你当前未在会议中 otherwise', () => {
    const room = fold(meetingWith(['u-1']));
    assert.equal(checkMeetingAccess(room, 'u-1'), null);
    assert.equal(checkMeetingAccess(room, HOST), null);
    assert.equal(checkMeetingAccess(room, 'u-9')?.code, 'NOT_IN_MEETING');
    assert.equal(checkMeetingAccess(fold([]), 'u-1')?.code, 'MEETING_NOT_FOUND');
    const gone = fold([...meetingWith(['u-1']), left('u-1')]);
    assert.equal(checkMeetingAccess(gone, 'u-1')?.code, 'NOT_IN_MEETING');
    const over = fold([...created(), left(HOST, { reason: 'host_end' }), ended('host_ended')]);
    assert.equal(checkMeetingAccess(over, HOST)?.code, 'NOT_IN_MEETING');
  });
});
