/**
 * Deciders of the host role: a transfer by the host, and the host grace driven by the
 * host's WebSocket presence. The cell knows no socket: the edge tells it when the user's
 * last socket to the meeting dropped (MarkSocketsGone) and when one is there again
 * (MarkSocketLive, on `meeting.room.join`). "Last" is the edge's judgement across every
 * node the user is connected to.
 */
import type { DecideContext, Decision } from '../decider.js';
import { refuse } from './errors.js';
import { isActive, successorOf } from './evolve.js';
import { checkId, mustBeActive, mustBeHost, mustBeInProgress } from './guards.js';
import type { MeetingCommand, MeetingEvent, MeetingSettings, MeetingState } from './types.js';

type Cmd<T extends MeetingCommand['type']> = Extract<MeetingCommand, { type: T }>;
type Events = Decision<MeetingEvent>;

/** host_id moves to the target; the roles swap (role is derived from host_id). */
export function transferHost(
  state: MeetingState,
  cmd: Cmd<'TransferHost'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  if (cmd.target_user_id === cmd.operator_user_id) return refuse('CANNOT_TRANSFER_TO_SELF');
  if (!isActive(state, cmd.target_user_id)) return refuse('TARGET_NOT_ACTIVE');
  return [
    {
      type: 'HostChanged',
      old_host_id: cmd.operator_user_id,
      new_host_id: cmd.target_user_id,
      at_ms: ctx.nowMs,
    },
  ];
}

/**
 * `meeting.room.join` (ACK errors 会议不存在 / 你当前未在会议中) or a live socket's periodic
 * notice: activity for the stale cleanup; the host's cancels a pending grace.
 */
export function markSocketLive(
  state: MeetingState,
  cmd: Cmd<'MarkSocketLive'>,
  ctx: DecideContext,
): Events {
  const guard =
    mustBeInProgress(state) ?? checkId(cmd.user_id, 'user_id') ?? mustBeActive(state, cmd.user_id);
  if (guard) return guard;
  const events: MeetingEvent[] = [{ type: 'SocketLive', user_id: cmd.user_id, at_ms: ctx.nowMs }];
  if (state.host_grace?.user_id === cmd.user_id) {
    events.push({ type: 'HostGraceCancelled', user_id: cmd.user_id, at_ms: ctx.nowMs });
  }
  return events;
}

/**
 * A disconnect is a fact, not a request: never refused. Only the active host of a meeting
 * in progress starts a grace, and a pending grace keeps its first deadline.
 */
export function markSocketsGone(
  state: MeetingState,
  cmd: Cmd<'MarkSocketsGone'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): Events {
  if (state.status !== 1 || state.host_id !== cmd.user_id || !isActive(state, cmd.user_id)) {
    return [];
  }
  if (state.host_grace !== null) return [];
  return [
    {
      type: 'HostGraceStarted',
      user_id: cmd.user_id,
      deadline_ms: ctx.nowMs + settings.hostGraceMs,
      at_ms: ctx.nowMs,
    },
  ];
}

/**
 * The grace ran out: it ends (HostGraceExpired) and the host moves to the earliest-joined
 * other active member (host_grace_expired), if there is one; else the host stays host.
 */
export function expireHostGrace(state: MeetingState, ctx: DecideContext): MeetingEvent[] {
  const grace = state.host_grace;
  if (grace === null) return [];
  const events: MeetingEvent[] = [
    { type: 'HostGraceExpired', user_id: grace.user_id, at_ms: ctx.nowMs },
  ];
  const next = successorOf(state, grace.user_id);
  if (state.host_id === grace.user_id && next) {
    events.push({
      type: 'HostChanged',
      old_host_id: grace.user_id,
      new_host_id: next.user_id,
      auto_reason: 'host_grace_expired',
      at_ms: ctx.nowMs,
    });
  }
  return events;
}
