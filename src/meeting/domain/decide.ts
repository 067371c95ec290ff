/**
 * The meeting's decider: routes each command to its function, and the four durable
 * timers (empty TTL, presence leases, host grace, stale cleanup) with the one system
 * command that fires every due one.
 */
import type { DecideContext, Decision } from '../../domain/decider.js';
import {
  expireHostGrace,
  expirePresence,
  markSocketLive,
  markSocketsGone,
  transferHost,
} from './decide-host.js';
import {
  createMeeting,
  endMeeting,
  endWith,
  joinMeeting,
  kickMember,
  leaveMeeting,
  moveMediaServer,
} from './decide-membership.js';
import { changeMemberState, sendChat } from './decide-signals.js';
import { allowSelfUnmute, lockMeeting, muteAll } from './decide-controls.js';
import { startRecording, stopRecording } from './decide-recording.js';
import { startScreenShare, stopScreenShare } from './decide-screen.js';
import {
  admitWaiting,
  denyWaiting,
  expireWaiting,
  setWaitingRoom,
  waitingDeadline,
} from './decide-waiting.js';
import { assertNever, evolveMeeting, presenceOf } from './evolve.js';
import type { MeetingCommand, MeetingEvent, MeetingSettings, MeetingState } from './types.js';

export function decideMeeting(
  state: MeetingState,
  command: MeetingCommand,
  ctx: DecideContext,
  settings: MeetingSettings,
): Decision<MeetingEvent> {
  switch (command.type) {
    case 'CreateMeeting':
      return createMeeting(state, command, ctx, settings);
    case 'JoinMeeting':
      return joinMeeting(state, command, ctx, settings);
    case 'LeaveMeeting':
      return leaveMeeting(state, command, ctx, settings);
    case 'EndMeeting':
      return endMeeting(state, command, ctx);
    case 'TransferHost':
      return transferHost(state, command, ctx);
    case 'KickMember':
      return kickMember(state, command, ctx, settings);
    case 'ChangeMemberState':
      return changeMemberState(state, command, ctx);
    case 'SendChat':
      return sendChat(state, command, ctx);
    case 'LockMeeting':
      return lockMeeting(state, command, ctx);
    case 'MuteAll':
      return muteAll(state, command, ctx);
    case 'AllowSelfUnmute':
      return allowSelfUnmute(state, command, ctx);
    case 'StartRecording':
      return startRecording(state, command, ctx);
    case 'StopRecording':
      return stopRecording(state, command, ctx);
    case 'StartScreenShare':
      return startScreenShare(state, command, ctx);
    case 'StopScreenShare':
      return stopScreenShare(state, command, ctx);
    case 'SetWaitingRoom':
      return setWaitingRoom(state, command, ctx);
    case 'AdmitWaiting':
      return admitWaiting(state, command, ctx);
    case 'DenyWaiting':
      return denyWaiting(state, command, ctx);
    case 'MarkSocketLive':
      return markSocketLive(state, command, ctx, settings);
    case 'MarkSocketsGone':
      return markSocketsGone(state, command, ctx, settings);
    case 'ExpireMeetingDeadlines':
      return expireMeetingDeadlines(state, ctx, settings);
    case 'MoveMediaServer':
      return moveMediaServer(state, command, ctx);
    default:
      return assertNever(command);
  }
}

export type MeetingTimer = 'empty_ttl' | 'presence' | 'host_grace' | 'waiting' | 'stale';

/**
 * The meeting's timers with their deadlines, earliest first (equal times: empty TTL,
 * presence, host grace, waiting room, stale). Only a meeting in progress has any. `presence` is the
 * earliest lease of any (user, node). The stale deadline counts from the last event:
 * refused commands change nothing, so they keep nothing alive.
 */
export function meetingTimers(
  state: MeetingState,
  settings: MeetingSettings,
): { readonly timer: MeetingTimer; readonly at_ms: number }[] {
  if (state.status !== 1) return [];
  const timers: { timer: MeetingTimer; at_ms: number }[] = [];
  if (state.empty_deadline_ms !== null) {
    timers.push({ timer: 'empty_ttl', at_ms: state.empty_deadline_ms });
  }
  const leases = presenceOf(state);
  if (leases.length > 0) {
    timers.push({ timer: 'presence', at_ms: Math.min(...leases.map((e) => e.until_ms)) });
  }
  if (state.host_grace !== null) {
    timers.push({ timer: 'host_grace', at_ms: state.host_grace.deadline_ms });
  }
  const waiting = waitingDeadline(state);
  if (waiting !== null) timers.push({ timer: 'waiting', at_ms: waiting });
  if (state.last_activity_ms !== null) {
    timers.push({ timer: 'stale', at_ms: state.last_activity_ms + settings.staleMs });
  }
  // Array.prototype.sort is stable: equal deadlines keep the order above.
  return timers.sort((a, b) => a.at_ms - b.at_ms);
}

/** The earliest deadline the meeting waits for, or null. */
export function nextMeetingDeadline(state: MeetingState, settings: MeetingSettings): number | null {
  return meetingTimers(state, settings)[0]?.at_ms ?? null;
}

/**
 * Fires every timer due at ctx.nowMs, earliest first, each against the state the earlier
 * ones left (an ended meeting has no timers left). Each firing clears its own deadline, so
 * a replay or a second alarm at the same time does nothing: a deadline fires once.
 */
export function expireMeetingDeadlines(
  state: MeetingState,
  ctx: DecideContext,
  settings: MeetingSettings,
): MeetingEvent[] {
  const events: MeetingEvent[] = [];
  let current = state;
  // Every firing clears its deadline, but one may start another: an expired lease starts
  // the grace, possibly of a host who got the role from a grace that expired just before.
  // The bound keeps a bug from looping forever.
  for (let round = 0; round < 8; round++) {
    const due = meetingTimers(current, settings)[0];
    if (!due || due.at_ms > ctx.nowMs) break;
    const fired = fire(current, due.timer, ctx, settings);
    if (fired.length === 0) break;
    events.push(...fired);
    current = fired.reduce(evolveMeeting, current);
  }
  return events;
}

function fire(
  state: MeetingState,
  timer: MeetingTimer,
  ctx: DecideContext,
  settings: MeetingSettings,
): MeetingEvent[] {
  switch (timer) {
    case 'empty_ttl':
      // Nobody is inside (a join cancels the countdown); the edge closes the router and
      // broadcasts meeting.room.ended {reason: empty_ttl}.
      return endWith(state, 'empty_ttl', ctx);
    case 'presence':
      return expirePresence(state, ctx, settings);
    case 'host_grace':
      return expireHostGrace(state, ctx);
    case 'waiting':
      return expireWaiting(state, ctx);
    case 'stale':
      return endWith(state, 'system_error', ctx);
    default:
      return assertNever(timer);
  }
}
