/**
 * Deciders of what members say inside the meeting: `meeting.member.state.changed` and the
 * chat. Neither changes who is in the meeting.
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { hasLoneSurrogate } from '../../domain/text.js';
import { invalidArgument, refuse } from './errors.js';
import { isActive } from './evolve.js';
import { mustBeActive, mustBeInProgress } from './guards.js';
import type { MeetingCommand, MeetingEvent, MeetingState } from './types.js';

type Cmd<T extends MeetingCommand['type']> = Extract<MeetingCommand, { type: T }>;
type Events = Decision<MeetingEvent>;

const STATE_FIELDS = ['audio_enabled', 'video_enabled', 'hand_raised'] as const;
const CHAT_MAX_CHARS = 500;
/** Control characters but tab, line feed and carriage return: a chat may span lines. */
// eslint-disable-next-line no-control-regex
const CHAT_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;

/**
 * Self (target omitted or the caller): anyone active. Another member: the host only, with
 * the WebSocket's text 仅主持人可执行此操作. The broadcast carries `actor_id`.
 */
export function changeMemberState(
  state: MeetingState,
  cmd: Cmd<'ChangeMemberState'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeInProgress(state) ?? mustBeActive(state, cmd.user_id);
  if (guard) return guard;
  const given = STATE_FIELDS.filter((f) => cmd[f] !== undefined);
  if (given.length === 0) {
    return invalidArgument('one of audio_enabled, video_enabled, hand_raised is required');
  }
  if (given.some((f) => typeof cmd[f] !== 'boolean')) {
    return invalidArgument('audio_enabled, video_enabled, hand_raised are booleans');
  }
  const target = cmd.target_user_id ?? cmd.user_id;
  if (target !== cmd.user_id && state.host_id !== cmd.user_id) return refuse('HOST_ONLY_WS');
  if (!isActive(state, target)) return refuse('TARGET_NOT_ACTIVE');
  // After a mute-all that keeps members muted, only the host unmutes anyone.
  if (cmd.audio_enabled === true && state.self_unmute_blocked && state.host_id !== cmd.user_id) {
    return refuse('SELF_UNMUTE_BLOCKED');
  }
  return [
    {
      type: 'MemberStateChanged',
      user_id: target,
      actor_id: cmd.user_id,
      ...Object.fromEntries(given.map((f) => [f, cmd[f]])),
      at_ms: ctx.nowMs,
    },
  ];
}

/**
 * Content "1~500 字符" (code points; not blank). The message id is the meeting's next chat
 * number, assigned here so the reply (`message.id`) and the projection's row agree and a
 * retry answers the same id.
 */
export function sendChat(state: MeetingState, cmd: Cmd<'SendChat'>, ctx: DecideContext): Events {
  const guard = mustBeInProgress(state) ?? mustBeActive(state, cmd.user_id);
  if (guard) return guard;
  const content = cmd.content;
  if (
    typeof content !== 'string' ||
    content.trim().length === 0 ||
    [...content].length > CHAT_MAX_CHARS
  ) {
    return invalidArgument('content 1-500 characters');
  }
  if (CHAT_CONTROL.test(content)) {
    return invalidArgument('content must not contain control characters');
  }
  if (hasLoneSurrogate(content)) return invalidArgument('content must be valid UTF-16');
  return [
    {
      type: 'ChatSent',
      meeting_id: state.meeting_id ?? null,
      message_id: state.chat_count + 1,
      user_id: cmd.user_id,
      content,
      at_ms: ctx.nowMs,
    },
  ];
}
