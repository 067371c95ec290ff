/**
 * What members do inside a meeting: `meeting.member.state.changed` (self, or the host on
 * another member, with the WebSocket's own 仅主持人可执行此操作), the chat (1–500 characters,
 * ids 1, 2, 3… assigned by the decider) and the WebSocket presence notices
 * (`meeting.room.join` → MarkSocketLive).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { participantOf } from './evolve.js';
import {
  CODE,
  created,
  ended,
  given,
  HOST,
  MEETING_ID,
  left,
  live,
  meetingWith,
  NODE_A,
  NOW,
  socketLive,
} from './testing/given-when-then.js';
import type { MeetingCommand, MemberMediaState } from './types.js';
import { replyOf } from './view.js';

function changeState(
  user_id: string,
  fields: MemberMediaState,
  target_user_id?: string,
): MeetingCommand {
  return {
    type: 'ChangeMemberState',
    user_id,
    ...(target_user_id === undefined ? {} : { target_user_id }),
    ...fields,
  };
}
const chat = (user_id: string, content: string): MeetingCommand => ({
  type: 'SendChat',
  user_id,
  content,
});

describe('ChangeMemberState', () => {
  it('self: only the given fields change; the broadcast payload carries actor_id', () => {
    const command = changeState('u-1', { audio_enabled: true, hand_raised: true });
    const event = {
      type: 'MemberStateChanged',
      user_id: 'u-1',
      actor_id: 'u-1',
      audio_enabled: true,
      hand_raised: true,
      at_ms: NOW,
    } as const;
    const state = given(meetingWith(['u-1']))
      .when(command)
      .then([event]);
    const p = participantOf(state, 'u-1');
    assert.deepEqual([p?.audio_enabled, p?.video_enabled, p?.hand_raised], [true, false, true]);
    assert.deepEqual(replyOf(state, command, [event]), {
      room_code: CODE,
      user_id: 'u-1',
      actor_id: 'u-1',
      audio_enabled: true,
      hand_raised: true,
    });
  });

  it('target_user_id equal to the caller is self, for anyone', () => {
    given(meetingWith(['u-1']))
      .when(changeState('u-1', { video_enabled: true }, 'u-1'))
      .then([
        {
          type: 'MemberStateChanged',
          user_id: 'u-1',
          actor_id: 'u-1',
          video_enabled: true,
          at_ms: NOW,
        },
      ]);
  });

  it('the host mutes another member: actor_id differs from user_id', () => {
    given(meetingWith(['u-1']))
      .when(changeState(HOST, { audio_enabled: false }, 'u-1'))
      .then([
        {
          type: 'MemberStateChanged',
          user_id: 'u-1',
          actor_id: HOST,
          audio_enabled: false,
          at_ms: NOW,
        },
      ]);
  });

  it('仅主持人可执行此操作 (not REST’s 仅主持人可操作) for a non-host on another member', () => {
    const error = given(meetingWith(['u-1', 'u-2']))
      .when(changeState('u-1', { audio_enabled: false }, 'u-2'))
      .thenError('HOST_ONLY_WS');
    assert.equal(error.message, '仅主持人可执行此操作');
  });

  it('refuses no field, a non-boolean, a caller not in the meeting, an inactive target', () => {
    const room = meetingWith(['u-1']);
    given(room).when(changeState('u-1', {})).thenError('INVALID_ARGUMENT');
    given(room)
      .when(changeState('u-1', { audio_enabled: 'false' as unknown as boolean }))
      .thenError('INVALID_ARGUMENT');
    const outsider = given(room)
      .when(changeState('u-9', { audio_enabled: true }))
      .thenError('NOT_IN_MEETING');
    assert.equal(outsider.message, '你当前未在会议中');
    given(room, left('u-1'))
      .when(changeState(HOST, { audio_enabled: false }, 'u-1'))
      .thenError('TARGET_NOT_ACTIVE');
    given()
      .when(changeState('u-1', { audio_enabled: true }))
      .thenError('MEETING_NOT_FOUND');
  });
});

describe('SendChat', () => {
  it('an active member chats; ids are 1, 2, 3… in the meeting; the reply is the message', () => {
    const hello = {
      type: 'ChatSent',
      meeting_id: MEETING_ID,
      message_id: 1,
      user_id: 'u-1',
      content: 'hello',
      at_ms: NOW,
    } as const;
    const first = given(meetingWith(['u-1']))
      .when(chat('u-1', 'hello'))
      .then([hello]);
    const event = { ...hello, message_id: 2, user_id: HOST, content: '第二条\n两行' } as const;
    const second = given(meetingWith(['u-1']), hello)
      .when(chat(HOST, '第二条\n两行'))
      .then([event]);
    assert.equal(first.chat_count, 1);
    assert.equal(second.chat_count, 2);
    assert.deepEqual(replyOf(second, chat(HOST, '第二条\n两行'), [event]), {
      message: {
        id: 2,
        room_code: CODE,
        user_id: HOST,
        content: '第二条\n两行',
        created_at_ms: NOW,
      },
    });
  });

  it('content 1–500 characters (code points), not blank, no control characters', () => {
    const room = meetingWith(['u-1']);
    for (const bad of ['', '   ', 'x'.repeat(501), 'a\u0000b', 'bell\u0007', '\udc00']) {
      given(room).when(chat('u-1', bad)).thenError('INVALID_ARGUMENT');
    }
    for (const ok of ['x', 'x'.repeat(500), '😀'.repeat(500), 'tab\tok']) {
      const result = given(room).when(chat('u-1', ok)).result;
      assert.ok(Array.isArray(result), `${ok.length} chars accepted`);
    }
  });

  it('你当前未在会议中 for someone who left; 会议已结束 for an ended meeting', () => {
    given(meetingWith(['u-1']), left('u-1'))
      .when(chat('u-1', 'hi'))
      .thenError('NOT_IN_MEETING');
    given(created(), left(HOST), ended('host_ended'))
      .when(chat(HOST, 'hi'))
      .thenError('MEETING_ENDED');
  });
});

describe('MarkSocketLive (meeting.room.join)', () => {
  it('an active member: a liveness event with the node’s lease, nothing else changes', () => {
    const before = given(meetingWith(['u-1'])).state;
    const after = given(meetingWith(['u-1']))
      .when(live('u-1'))
      .then([socketLive('u-1', NODE_A, NOW)]);
    const rest = (s: typeof after) => ({ ...s, last_activity_ms: null, presence: [] });
    assert.deepEqual(rest(after), rest(before));
    assert.equal(after.last_activity_ms, NOW);
  });

  it('ACK failures: 会议不存在, 你当前未在会议中; a malformed node id is refused', () => {
    given().when(live('u-1')).thenError('MEETING_NOT_FOUND');
    given(meetingWith(['u-1']), left('u-1'))
      .when(live('u-1'))
      .thenError('NOT_IN_MEETING');
    given(meetingWith(['u-1']))
      .when(live('u-1', ''))
      .thenError('INVALID_ARGUMENT');
  });
});
