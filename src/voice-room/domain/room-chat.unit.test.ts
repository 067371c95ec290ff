/**
 * The public chat (公屏): messages of present members numbered by the room, chat mutes by
 * the kick rule that outlive a leave, deletions by the sender or a manager.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHAT_MUTE_MAX_S } from './decide-chat.js';
import {
  activeRoom,
  adminSet,
  closed,
  given,
  joined,
  kicked,
  left,
  NOW,
  OWNER,
} from './testing/given-when-then.js';
import type { VoiceRoomCommand, VoiceRoomEvent } from './types.js';

const room = () => [...activeRoom(), adminSet('u-admin'), joined('u-admin'), joined('u-1')];
const say = (user_id: string, content: string): VoiceRoomCommand => ({
  type: 'SendRoomMessage',
  user_id,
  user_name: `name of ${user_id}`,
  content,
});
const sent = (
  message_id: number,
  user_id: string,
  content: string,
  at_ms = NOW,
): VoiceRoomEvent => ({
  type: 'RoomMessageSent',
  message_id,
  user_id,
  user_name: `name of ${user_id}`,
  content,
  at_ms,
});
const mute = (user_id: string, duration_s: number, operator_user_id = OWNER): VoiceRoomCommand => ({
  type: 'MuteChatUser',
  user_id,
  duration_s,
  operator_user_id,
});
const muted = (user_id: string, until: number | null, operator_user_id = OWNER, at_ms = NOW) =>
  ({ type: 'ChatMuteSet', user_id, operator_user_id, muted_until_ms: until, at_ms }) as const;
const del = (
  message_id: number,
  operator_user_id: string,
  message: { user_id: string; deleted: boolean } | null,
): VoiceRoomCommand => ({ type: 'DeleteRoomMessage', message_id, operator_user_id, message });

describe('SendRoomMessage', () => {
  it('numbers the messages of the room 1, 2, 3…, trimmed, with the sender and the time', () => {
    const state = given(room())
      .when(say('u-1', '  hello  '))
      .then([sent(1, 'u-1', 'hello')]);
    assert.equal(state.message_count, 1);
    given(room(), sent(1, 'u-1', 'hello'))
      .when(say('u-admin', '大家好 🎤'))
      .then([sent(2, 'u-admin', '大家好 🎤')]);
  });

  it('refuses who is not present, a banned user, a closed room, and bad content', () => {
    given(room()).when(say('u-2', 'hi')).thenError('NOT_IN_ROOM');
    given(room(), left('u-1')).when(say('u-1', 'hi')).thenError('NOT_IN_ROOM');
    given(room(), kicked('u-1')).when(say('u-1', 'hi')).thenError('USER_BANNED');
    given(room(), closed()).when(say('u-1', 'hi')).thenError('ROOM_CLOSED');
    for (const content of ['', '   ', 'x'.repeat(501), 'a\u0000b', 'line\nbreak', 'rtl\u202e']) {
      given(room()).when(say('u-1', content)).thenError('INVALID_ARGUMENT');
    }
    given(room())
      .when(say('u-1', 'x'.repeat(500)))
      .then([sent(1, 'u-1', 'x'.repeat(500))]);
  });

  it('refuses a chat-muted member until the mute ends, rejoining or not', () => {
    const mutedRoom = [...room(), muted('u-1', NOW + 60_000)];
    const refused = given(mutedRoom).when(say('u-1', 'hi')).thenError('CHAT_MUTED');
    assert.match(refused.message, /until /);
    given(mutedRoom, left('u-1'), joined('u-1')).when(say('u-1', 'hi')).thenError('CHAT_MUTED');
    given(mutedRoom)
      .when(say('u-1', 'hi'), { nowMs: NOW + 60_000 })
      .then([sent(1, 'u-1', 'hi', NOW + 60_000)]);
  });
});

describe('MuteChatUser', () => {
  it('mutes for duration_s and lifts with 0; lifting no mute changes nothing', () => {
    const state = given(room())
      .when(mute('u-1', 60, 'u-admin'))
      .then([muted('u-1', NOW + 60_000, 'u-admin')]);
    assert.deepEqual(state.chat_mutes, { 'u-1': NOW + 60_000 });
    const lifted = given(room(), muted('u-1', NOW + 60_000))
      .when(mute('u-1', 0))
      .then([muted('u-1', null)]);
    assert.equal(lifted.chat_mutes, undefined);
    given(room()).when(mute('u-1', 0)).then([]);
    // An ended mute is not on: lifting it is nothing either.
    given(room(), muted('u-1', NOW - 1))
      .when(mute('u-1', 0))
      .then([]);
  });

  it('drops ended mutes at the next change, and reaches who is not present', () => {
    const state = given(room(), muted('u-2', NOW + 10, OWNER, NOW - 5_000))
      .when(mute('u-3', 30), { nowMs: NOW + 20 })
      .then([muted('u-3', NOW + 20 + 30_000, OWNER, NOW + 20)]);
    assert.deepEqual(state.chat_mutes, { 'u-3': NOW + 20 + 30_000 });
  });

  it('follows the kick rule, and needs a manager and a duration in range', () => {
    given(room())
      .when(mute('u-admin', 60, 'u-1'))
      .thenError('NOT_ADMIN');
    given(room())
      .when(mute(OWNER, 60, 'u-admin'))
      .thenError('CANNOT_TARGET_OWNER');
    given(room(), adminSet('u-1'))
      .when(mute('u-1', 60, 'u-admin'))
      .thenError('NOT_OWNER');
    given(room())
      .when(mute('u-admin', 60, 'u-admin'))
      .thenError('CANNOT_TARGET_SELF');
    for (const d of [-1, 1.5, CHAT_MUTE_MAX_S + 1]) {
      given(room()).when(mute('u-1', d)).thenError('INVALID_ARGUMENT');
    }
  });
});

describe('DeleteRoomMessage', () => {
  const withMessages = () => [...room(), sent(1, 'u-1', 'a'), sent(2, 'u-admin', 'b')];
  const deleted = (message_id: number, operator_user_id: string): VoiceRoomEvent => ({
    type: 'RoomMessageDeleted',
    message_id,
    operator_user_id,
  });

  it('lets the sender, the owner and an admin delete; a deleted one stays deleted', () => {
    given(withMessages())
      .when(del(1, 'u-1', { user_id: 'u-1', deleted: false }))
      .then([deleted(1, 'u-1')]);
    given(withMessages())
      .when(del(1, 'u-admin', { user_id: 'u-1', deleted: false }))
      .then([deleted(1, 'u-admin')]);
    given(withMessages())
      .when(del(2, OWNER, { user_id: 'u-admin', deleted: false }))
      .then([deleted(2, OWNER)]);
    given(withMessages())
      .when(del(1, 'u-1', { user_id: 'u-1', deleted: true }))
      .then([]);
  });

  it('refuses another member, and a message the room never had or no longer keeps', () => {
    given(withMessages())
      .when(del(2, 'u-1', { user_id: 'u-admin', deleted: false }))
      .thenError('NOT_ADMIN');
    given(withMessages())
      .when(del(3, OWNER, { user_id: 'u-1', deleted: false }))
      .thenError('MESSAGE_NOT_FOUND');
    given(withMessages())
      .when(del(1, OWNER, null))
      .thenError('MESSAGE_NOT_FOUND');
    given(withMessages())
      .when(del(0, OWNER, null))
      .thenError('MESSAGE_NOT_FOUND');
  });
});
