/**
 * The host's controls of the whole meeting (beyond the seed, in its conventions): a lock
 * that keeps new people out while the members in stay, and mute-all, which mutes every
 * other active member (the seed's `meeting.member.state.changed` each, with the host as
 * `actor_id`) and may keep them from unmuting themselves until the host allows it.
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { invalidArgument } from './errors.js';
import { activeParticipants } from './evolve.js';
import { mustBeHost, mustBeInProgress } from './guards.js';
import type { MeetingCommand, MeetingEvent, MeetingState } from './types.js';

type Cmd<T extends MeetingCommand['type']> = Extract<MeetingCommand, { type: T }>;
type Events = Decision<MeetingEvent>;

export function lockMeeting(
  state: MeetingState,
  cmd: Cmd<'LockMeeting'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  if (typeof cmd.locked !== 'boolean') return invalidArgument('locked is a boolean');
  if (cmd.locked === (state.locked ?? false)) return [];
  return [
    { type: 'MeetingLocked', locked: cmd.locked, actor_id: cmd.operator_user_id, at_ms: ctx.nowMs },
  ];
}

export function muteAll(state: MeetingState, cmd: Cmd<'MuteAll'>, ctx: DecideContext): Events {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  if (typeof cmd.allow_unmute !== 'boolean') return invalidArgument('allow_unmute is a boolean');
  const muted: MeetingEvent[] = activeParticipants(state)
    .filter((p) => p.user_id !== cmd.operator_user_id && p.audio_enabled)
    .map((p) => ({
      type: 'MemberStateChanged',
      user_id: p.user_id,
      actor_id: cmd.operator_user_id,
      audio_enabled: false,
      at_ms: ctx.nowMs,
    }));
  return [...muted, ...selfUnmuteEvents(state, cmd.allow_unmute, cmd.operator_user_id, ctx)];
}

export function allowSelfUnmute(
  state: MeetingState,
  cmd: Cmd<'AllowSelfUnmute'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  if (typeof cmd.allowed !== 'boolean') return invalidArgument('allowed is a boolean');
  return selfUnmuteEvents(state, cmd.allowed, cmd.operator_user_id, ctx);
}

/**
 * The media server holds the member's audio (pauses its audio producers, refuses new ones):
 * members may not unmute themselves and this one is muted. The host is never held.
 */
export function audioHeld(state: MeetingState, userId: string): boolean {
  if (!state.self_unmute_blocked || state.host_id === userId) return false;
  const member = activeParticipants(state).find((p) => p.user_id === userId);
  return member !== undefined && !member.audio_enabled;
}

/** Whether members may unmute themselves, recorded only when it changes. */
function selfUnmuteEvents(
  state: MeetingState,
  allowed: boolean,
  actor: string,
  ctx: DecideContext,
): MeetingEvent[] {
  if (allowed === !(state.self_unmute_blocked ?? false)) return [];
  return [{ type: 'SelfUnmuteSet', allowed, actor_id: actor, at_ms: ctx.nowMs }];
}
