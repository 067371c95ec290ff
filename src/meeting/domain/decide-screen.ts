/**
 * Screen sharing (beyond the seed): one share per meeting at a time, held in the cell so
 * that every node agrees who shares. The host takes a share over; anyone may take over a
 * share whose sharer has no live screen producer any more (the edge looked, and names that
 * sharer), once the share is older than {@link STALE_SHARE_GRACE_MS}: a claim's producer is
 * made right after it, so a younger share without one is still being made.
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { refuse } from './errors.js';
import { mustBeActive, mustBeInProgress } from './guards.js';
import type { MeetingCommand, MeetingEvent, MeetingState } from './types.js';

type Cmd<T extends MeetingCommand['type']> = Extract<MeetingCommand, { type: T }>;

export const STALE_SHARE_GRACE_MS = 10_000;

export function startScreenShare(
  state: MeetingState,
  cmd: Cmd<'StartScreenShare'>,
  ctx: DecideContext,
): Decision<MeetingEvent> {
  const guard = mustBeInProgress(state) ?? mustBeActive(state, cmd.user_id);
  if (guard) return guard;
  const share = state.screen_share ?? null;
  if (share?.user_id === cmd.user_id) return [];
  const started: MeetingEvent = {
    type: 'ScreenShareStarted',
    user_id: cmd.user_id,
    at_ms: ctx.nowMs,
  };
  if (share === null) return [started];
  const stale =
    cmd.stale_sharer_id === share.user_id && ctx.nowMs - share.since_ms >= STALE_SHARE_GRACE_MS;
  if (state.host_id !== cmd.user_id && !stale) return refuse('SCREEN_SHARE_BUSY');
  return [
    { type: 'ScreenShareStopped', user_id: share.user_id, actor_id: cmd.user_id, at_ms: ctx.nowMs },
    started,
  ];
}

export function stopScreenShare(
  state: MeetingState,
  cmd: Cmd<'StopScreenShare'>,
  ctx: DecideContext,
): Decision<MeetingEvent> {
  const guard = mustBeInProgress(state);
  if (guard) return guard;
  if (state.screen_share?.user_id !== cmd.user_id) return [];
  return [
    { type: 'ScreenShareStopped', user_id: cmd.user_id, actor_id: cmd.user_id, at_ms: ctx.nowMs },
  ];
}
