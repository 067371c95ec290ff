/**
 * The waiting room (beyond the seed, in its conventions): while it is on, a join that passes
 * the seed's checks up to the password waits for the host instead of coming in; the host
 * admits (with the seed's remaining rules: capacity and the single-meeting rule, judged at
 * admission) or denies each, or all. A wait ends when admitted, denied, left, expired
 * (`waitingTtlMs`, a durable timer of the cell) or when the meeting ends.
 */
import {
  isDomainError,
  type DecideContext,
  type Decision,
  type DomainError,
} from '../../domain/decider.js';
import { invalidArgument, refuse } from './errors.js';
import { activeParticipants, participantOf, waitingOf } from './evolve.js';
import { mustBeActive, mustBeHost, mustBeInProgress } from './guards.js';
import type {
  MeetingCommand,
  MeetingEvent,
  MeetingSettings,
  MeetingState,
  WaitingEntry,
  WaitingLeftReason,
} from './types.js';

type Cmd<T extends MeetingCommand['type']> = Extract<MeetingCommand, { type: T }>;
type Events = Decision<MeetingEvent>;

/** Whether this join waits for the host: the room is on and the joiner is not the host. */
export function joinWaits(state: MeetingState, userId: string): boolean {
  return state.waiting_room === true && state.host_id !== userId;
}

export function isWaiting(state: MeetingState, userId: string): boolean {
  return waitingOf(state).some((w) => w.user_id === userId);
}

/** The join's wait: a new entry, or nothing for a join already waiting (its retry). */
export function waitForHost(
  state: MeetingState,
  cmd: Cmd<'JoinMeeting'>,
  ctx: DecideContext,
  settings: MeetingSettings,
): MeetingEvent[] {
  if (isWaiting(state, cmd.user_id)) return [];
  const row = participantOf(state, cmd.user_id);
  return [
    {
      type: 'WaitingJoined',
      user_id: cmd.user_id,
      participant_id: row ? row.participant_id : cmd.participant_id,
      host_id: state.host_id,
      deadline_ms: ctx.nowMs + settings.waitingTtlMs,
      at_ms: ctx.nowMs,
    },
  ];
}

export function setWaitingRoom(
  state: MeetingState,
  cmd: Cmd<'SetWaitingRoom'>,
  ctx: DecideContext,
): Events {
  const guard = mustBeInProgress(state) ?? mustBeHost(state, cmd.operator_user_id);
  if (guard) return guard;
  if (typeof cmd.enabled !== 'boolean') return invalidArgument('enabled is a boolean');
  if (cmd.enabled === (state.waiting_room ?? false)) return [];
  return [
    {
      type: 'WaitingRoomSet',
      enabled: cmd.enabled,
      actor_id: cmd.operator_user_id,
      at_ms: ctx.nowMs,
    },
  ];
}

/**
 * The host's choice of whom: one waiting user, or all of them (null); or the refusal (the
 * host, in the meeting in progress, naming someone who waits).
 */
function hostsChoice(
  state: MeetingState,
  operator: string,
  userId: unknown,
): readonly WaitingEntry[] | DomainError {
  const guard =
    mustBeInProgress(state) ?? mustBeHost(state, operator) ?? mustBeActive(state, operator);
  if (guard) return guard;
  if (userId === null) return waitingOf(state);
  if (typeof userId !== 'string') return invalidArgument('user_id is a user id or null (all)');
  const entry = waitingOf(state).find((w) => w.user_id === userId);
  return entry ? [entry] : refuse('NOT_WAITING');
}

export function admitWaiting(
  state: MeetingState,
  cmd: Cmd<'AdmitWaiting'>,
  ctx: DecideContext,
): Events {
  const entries = hostsChoice(state, cmd.operator_user_id, cmd.user_id);
  if (isDomainError(entries)) return entries;
  const single = cmd.user_id !== null;
  const inOther = new Set(cmd.in_other_meeting_user_ids);
  let room = state.max_members - activeParticipants(state).length;
  let joinSeq = state.join_count;
  const events: MeetingEvent[] = [];
  for (const entry of entries) {
    // The seed's rules, at admission: one meeting at a time, then capacity.
    if (inOther.has(entry.user_id)) {
      if (single) return refuse('IN_OTHER_MEETING');
      continue;
    }
    if (room <= 0) {
      if (single) return refuse('MEETING_FULL');
      break;
    }
    room -= 1;
    joinSeq += 1;
    events.push(
      {
        type: 'WaitingAdmitted',
        user_id: entry.user_id,
        actor_id: cmd.operator_user_id,
        at_ms: ctx.nowMs,
      },
      {
        type: 'MemberJoined',
        meeting_id: state.meeting_id ?? null,
        user_id: entry.user_id,
        participant_id: entry.participant_id,
        role: 0,
        rejoined: participantOf(state, entry.user_id) !== undefined,
        join_seq: joinSeq,
        at_ms: ctx.nowMs,
      },
    );
  }
  return events;
}

export function denyWaiting(
  state: MeetingState,
  cmd: Cmd<'DenyWaiting'>,
  ctx: DecideContext,
): Events {
  const entries = hostsChoice(state, cmd.operator_user_id, cmd.user_id);
  if (isDomainError(entries)) return entries;
  return entries.map((w) => waitingLeft(state, w.user_id, 'denied', ctx));
}

export function waitingLeft(
  state: MeetingState,
  userId: string,
  reason: WaitingLeftReason,
  ctx: DecideContext,
): MeetingEvent {
  return { type: 'WaitingLeft', user_id: userId, reason, host_id: state.host_id, at_ms: ctx.nowMs };
}

/** Every wait past its deadline ends (`expired`). */
export function expireWaiting(state: MeetingState, ctx: DecideContext): MeetingEvent[] {
  return waitingOf(state)
    .filter((w) => w.deadline_ms <= ctx.nowMs)
    .map((w) => waitingLeft(state, w.user_id, 'expired', ctx));
}

/** The earliest wait's deadline, or null. */
export function waitingDeadline(state: MeetingState): number | null {
  const waiting = waitingOf(state);
  return waiting.length === 0 ? null : Math.min(...waiting.map((w) => w.deadline_ms));
}
