/**
 * The public chat (公屏) of a voice room: messages of present members, numbered by the
 * room; chat mutes and deletions by the owner or an admin. Each is a command of the cell,
 * so a mute and a message at the same moment have one order, on every node.
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { displayTextError } from './decide-room.js';
import { invalidArgument, refuse } from './errors.js';
import {
  isOwnerOrAdmin,
  mustBeActive,
  mustBeOwnerOrAdmin,
  mustBePresent,
  mustOutrank,
} from './guards.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from './types.js';

type Cmd<T extends VoiceRoomCommand['type']> = Extract<VoiceRoomCommand, { type: T }>;
type Events = Decision<VoiceRoomEvent>;

export const MESSAGE_MAX_CHARS = 500;
/** The longest chat mute: 30 days. */
export const CHAT_MUTE_MAX_S = 30 * 86_400;

/** Until when the user may not chat (server time), or null. */
export function chatMutedUntil(
  state: VoiceRoomState,
  userId: string,
  nowMs: number,
): number | null {
  const mutes = state.chat_mutes;
  // Own keys only: a user id is any text (`__proto__` reads the prototype otherwise).
  const until = mutes && Object.hasOwn(mutes, userId) ? mutes[userId] : undefined;
  return until !== undefined && until > nowMs ? until : null;
}

export function sendRoomMessage(
  state: VoiceRoomState,
  cmd: Cmd<'SendRoomMessage'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  if (state.banned.includes(cmd.user_id)) return refuse('USER_BANNED');
  const absent = mustBePresent(state, cmd.user_id);
  if (absent) return absent;
  const content = cmd.content.trim();
  const bad = displayTextError('content', content, 1, MESSAGE_MAX_CHARS);
  if (bad) return bad;
  const until = chatMutedUntil(state, cmd.user_id, ctx.nowMs);
  if (until !== null) return refuse('CHAT_MUTED', `until ${new Date(until).toISOString()}`);
  return [
    {
      type: 'RoomMessageSent',
      message_id: (state.message_count ?? 0) + 1,
      user_id: cmd.user_id,
      user_name: cmd.user_name,
      content,
      at_ms: ctx.nowMs,
    },
  ];
}

/**
 * Mutes a member's chat for `duration_s` (0 lifts it), by the kick rule: an admin mutes
 * plain members only, nobody the owner. The target need not be present: a mute outlives
 * a leave, so leaving and coming back does not lift it.
 */
export function muteChatUser(
  state: VoiceRoomState,
  cmd: Cmd<'MuteChatUser'>,
  ctx: DecideContext,
): Events {
  const guard =
    mustBeActive(state) ??
    mustBeOwnerOrAdmin(state, cmd.operator_user_id) ??
    (cmd.user_id === cmd.operator_user_id ? refuse('CANNOT_TARGET_SELF') : null) ??
    mustOutrank(state, cmd.operator_user_id, cmd.user_id, 'CANNOT_TARGET_OWNER');
  if (guard) return guard;
  if (!Number.isInteger(cmd.duration_s) || cmd.duration_s < 0 || cmd.duration_s > CHAT_MUTE_MAX_S) {
    return invalidArgument(`duration_s 0-${CHAT_MUTE_MAX_S}`);
  }
  const muted_until_ms = cmd.duration_s === 0 ? null : ctx.nowMs + cmd.duration_s * 1000;
  // Lifting a mute that is not on changes nothing.
  if (muted_until_ms === null && chatMutedUntil(state, cmd.user_id, ctx.nowMs) === null) return [];
  return [
    {
      type: 'ChatMuteSet',
      user_id: cmd.user_id,
      operator_user_id: cmd.operator_user_id,
      muted_until_ms,
      at_ms: ctx.nowMs,
    },
  ];
}

/** Deletes a message: its sender may, and the owner or an admin. A deleted one stays deleted. */
export function deleteRoomMessage(state: VoiceRoomState, cmd: Cmd<'DeleteRoomMessage'>): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  const known =
    Number.isSafeInteger(cmd.message_id) &&
    cmd.message_id >= 1 &&
    cmd.message_id <= (state.message_count ?? 0);
  if (!known || !cmd.message) return refuse('MESSAGE_NOT_FOUND', String(cmd.message_id));
  if (
    cmd.message.user_id !== cmd.operator_user_id &&
    !isOwnerOrAdmin(state, cmd.operator_user_id)
  ) {
    return refuse('NOT_ADMIN');
  }
  if (cmd.message.deleted) return [];
  return [
    {
      type: 'RoomMessageDeleted',
      message_id: cmd.message_id,
      operator_user_id: cmd.operator_user_id,
    },
  ];
}
