/**
 * Deciders of the host role: a transfer by the host, and the host grace driven by the
 * host's WebSocket presence. The cell knows no socket: each node tells it when a user's
 * socket to the meeting is live there (MarkSocketLive, on `meeting.room.join` and then
 * periodically) and when the user's last socket there dropped (MarkSocketsGone). The cell
 * keeps one presence lease per (user, node); a node that dies says nothing, so its leases
 * run out by themselves. "The host's last socket" is the cell's judgement across every
 * node: the host's grace starts when the host's last lease goes, by a notice or by expiry.
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { refuse } from './errors.js';
import { isActive, presenceOf, presenceOfUser, successorOf } from './evolve.js';
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
 * notice: the node's lease for the user runs presenceTtlMs from now; activity for the stale
 * cleanup; the host's cancels a pending grace.
 */
export function markSocketLive(
  state: MeetingState,
  cmd: Cmd<'MarkSocketLive'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): Events {
  const guard =
    mustBeInProgress(state) ??
    checkId(cmd.user_id, 'user_id') ??
    checkId(cmd.node_id, 'node_id') ??
    mustBeActive(state, cmd.user_id);
  if (guard) return guard;
  const events: MeetingEvent[] = [
    {
      type: 'SocketLive',
      user_id: cmd.user_id,
      node_id: cmd.node_id,
      until_ms: ctx.nowMs + settings.presenceTtlMs,
      at_ms: ctx.nowMs,
    },
  ];
  if (state.host_grace?.user_id === cmd.user_id) {
    events.push({ type: 'HostGraceCancelled', user_id: cmd.user_id, at_ms: ctx.nowMs });
  }
  return events;
}

/**
 * A disconnect is a fact, not a request: never refused (but for malformed ids). The node's
 * entry goes. The active host of a meeting in progress with no entry left on any node
 * starts a grace (also when it had none: a state saved before presence was kept), and a
 * pending grace keeps its first deadline.
 */
export function markSocketsGone(
  state: MeetingState,
  cmd: Cmd<'MarkSocketsGone'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): Events {
  const bad = checkId(cmd.user_id, 'user_id') ?? checkId(cmd.node_id, 'node_id');
  if (bad) return bad;
  if (state.status !== 1 || !isActive(state, cmd.user_id)) return [];
  const entries = presenceOfUser(state, cmd.user_id);
  const events: MeetingEvent[] = entries.some((e) => e.node_id === cmd.node_id)
    ? [{ type: 'SocketsGone', user_id: cmd.user_id, node_id: cmd.node_id, at_ms: ctx.nowMs }]
    : [];
  const elsewhere = entries.some((e) => e.node_id !== cmd.node_id);
  if (state.host_id === cmd.user_id && !elsewhere && state.host_grace === null) {
    events.push({
      type: 'HostGraceStarted',
      user_id: cmd.user_id,
      deadline_ms: ctx.nowMs + settings.hostGraceMs,
      at_ms: ctx.nowMs,
    });
  }
  return events;
}

/**
 * The timer: every lease due by now ends (PresenceExpired). If that leaves the active host
 * without any, the grace starts, counted from the moment the host's last lease ran out
 * (not from when the alarm fired: a late alarm, e.g. one woken after its owner died, does
 * not lengthen the host's absence).
 */
export function expirePresence(
  state: MeetingState,
  ctx: DecideContext,
  settings: MeetingSettings,
): MeetingEvent[] {
  const due = presenceOf(state).filter((e) => e.until_ms <= ctx.nowMs);
  const events: MeetingEvent[] = due.map((e) => ({
    type: 'PresenceExpired',
    user_id: e.user_id,
    node_id: e.node_id,
    at_ms: ctx.nowMs,
  }));
  const host = state.host_id;
  const hostDue = due.filter((e) => e.user_id === host);
  if (
    host !== null &&
    hostDue.length > 0 &&
    hostDue.length === presenceOfUser(state, host).length &&
    isActive(state, host) &&
    state.host_grace === null
  ) {
    const lapsedAt = Math.max(...hostDue.map((e) => e.until_ms));
    events.push({
      type: 'HostGraceStarted',
      user_id: host,
      deadline_ms: lapsedAt + settings.hostGraceMs,
      cause: 'presence_expired',
      at_ms: ctx.nowMs,
    });
  }
  return events;
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
