/**
 * Seat applications (seat mode `apply`): an audience member applies for a seat (any, or a
 * given one), the owner or an admin approves or rejects, the applicant may cancel, and an
 * application not decided in time expires (a deadline of the cell). Invitations go the
 * other way (抱麦): the owner or an admin invites, the invitee accepts or declines. Approving takes the
 * seat exactly as a MicUp does (a new mic session, pending_publish, the publish deadline).
 * The cell decides one command at a time: of two approvals for the last idle seat, the
 * second finds it taken and is refused; nobody is bumped. An application also ends when
 * its applicant leaves, goes stale, is kicked or takes a seat another way, when the room
 * goes back to `free`, and when it closes (./decide-room.ts, ./decide-mic.ts).
 */
import type { DecideContext, Decision, DomainError } from '../../domain/decider.js';
import { seatBusy, takeSeat } from './decide-mic.js';
import { applicationOf, endApplicationOf, endInvitationOf, invitationOf } from './decide-room.js';
import { refuse } from './errors.js';
import { mustBeActive, mustBeOwnerOrAdmin, mustBePresent, seatAt, seatOf } from './guards.js';
import type {
  MicSeat,
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from './types.js';

type Cmd<T extends VoiceRoomCommand['type']> = Extract<VoiceRoomCommand, { type: T }>;
type Events = Decision<VoiceRoomEvent>;

export const DEFAULT_SEAT_APPLICATION_TTL_MS = 60_000;

/** A present audience member applies; the same application again is a no-op. */
export function applyForSeat(
  state: VoiceRoomState,
  cmd: Cmd<'ApplyForSeat'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  if (state.seat_mode !== 'apply') return refuse('SEAT_MODE_FREE');
  const seatIndex = cmd.seat_index ?? null;
  if (seatIndex !== null && !seatAt(state, seatIndex)) return refuse('SEAT_NOT_FOUND');
  if (seatOf(state, cmd.user_id)) return refuse('ALREADY_ON_SEAT');
  const pending = applicationOf(state, cmd.user_id);
  if (pending) return pending.seat_index === seatIndex ? [] : refuse('ALREADY_APPLIED');
  const ttl = settings.seatApplicationTtlMs ?? DEFAULT_SEAT_APPLICATION_TTL_MS;
  return [
    {
      type: 'SeatApplied',
      user_id: cmd.user_id,
      seat_index: seatIndex,
      at_ms: ctx.nowMs,
      expires_at_ms: ctx.nowMs + ttl,
    },
  ];
}

export function cancelSeatApplication(
  state: VoiceRoomState,
  cmd: Cmd<'CancelSeatApplication'>,
): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  if (!applicationOf(state, cmd.user_id)) return refuse('NO_SEAT_APPLICATION');
  return endApplicationOf(state, cmd.user_id, 'cancelled');
}

/**
 * The applicant takes the seat the approver names, else the one applied for, else the
 * first idle one.
 */
export function approveSeatApplication(
  state: VoiceRoomState,
  cmd: Cmd<'ApproveSeatApplication'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  const application = applicationOf(state, cmd.user_id);
  if (!application) return refuse('NO_SEAT_APPLICATION');
  const seat = offeredSeat(state, cmd.seat_index ?? application.seat_index);
  if ('code' in seat) return seat;
  return [
    ...endApplicationOf(state, cmd.user_id, 'approved', cmd.operator_user_id),
    ...endInvitationOf(state, cmd.user_id, 'seated'),
    takeSeat(cmd.user_id, seat.seat_index, ctx, settings),
  ];
}

export function rejectSeatApplication(
  state: VoiceRoomState,
  cmd: Cmd<'RejectSeatApplication'>,
): Events {
  const guard = mustBeActive(state) ?? mustBeOwnerOrAdmin(state, cmd.operator_user_id);
  if (guard) return guard;
  if (!applicationOf(state, cmd.user_id)) return refuse('NO_SEAT_APPLICATION');
  return endApplicationOf(state, cmd.user_id, 'rejected', cmd.operator_user_id);
}

/**
 * The owner or an admin invites a present member on no seat to a seat (any, or a given
 * one), in either seat mode; the same invitation again is a no-op.
 */
export function inviteToSeat(
  state: VoiceRoomState,
  cmd: Cmd<'InviteToSeat'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard =
    mustBeActive(state) ??
    mustBeOwnerOrAdmin(state, cmd.operator_user_id) ??
    mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  if (cmd.user_id === cmd.operator_user_id) return refuse('CANNOT_TARGET_SELF');
  const seatIndex = cmd.seat_index ?? null;
  if (seatIndex !== null && !seatAt(state, seatIndex)) return refuse('SEAT_NOT_FOUND');
  if (seatOf(state, cmd.user_id)) return refuse('ALREADY_ON_SEAT');
  const pending = invitationOf(state, cmd.user_id);
  if (pending) {
    const same =
      pending.seat_index === seatIndex && pending.operator_user_id === cmd.operator_user_id;
    return same ? [] : refuse('ALREADY_INVITED');
  }
  const ttl = settings.seatApplicationTtlMs ?? DEFAULT_SEAT_APPLICATION_TTL_MS;
  return [
    {
      type: 'SeatInvited',
      user_id: cmd.user_id,
      seat_index: seatIndex,
      operator_user_id: cmd.operator_user_id,
      at_ms: ctx.nowMs,
      expires_at_ms: ctx.nowMs + ttl,
    },
  ];
}

/**
 * The invitee takes the seat offered (else the first idle one) as by MicUp; refused when it
 * was taken or locked meanwhile (the invitation stays until it expires or is declined).
 */
export function acceptSeatInvitation(
  state: VoiceRoomState,
  cmd: Cmd<'AcceptSeatInvitation'>,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Events {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.user_id);
  if (guard) return guard;
  const invitation = invitationOf(state, cmd.user_id);
  if (!invitation) return refuse('NO_SEAT_INVITATION');
  const seat = offeredSeat(state, invitation.seat_index);
  if ('code' in seat) return seat;
  return [
    ...endInvitationOf(state, cmd.user_id, 'accepted'),
    ...endApplicationOf(state, cmd.user_id, 'seated'),
    takeSeat(cmd.user_id, seat.seat_index, ctx, settings),
  ];
}

export function declineSeatInvitation(
  state: VoiceRoomState,
  cmd: Cmd<'DeclineSeatInvitation'>,
): Events {
  const guard = mustBeActive(state);
  if (guard) return guard;
  if (!invitationOf(state, cmd.user_id)) return refuse('NO_SEAT_INVITATION');
  return endInvitationOf(state, cmd.user_id, 'declined');
}

/**
 * The seat an approval or an accepted invitation gives: `index` if it is idle, or (null)
 * the first idle one; else the refusal.
 */
function offeredSeat(state: VoiceRoomState, index: number | null): MicSeat | DomainError {
  if (index === null) {
    return state.seats.find((s) => s.state === 'idle' && !s.user_id) ?? refuse('NO_FREE_SEAT');
  }
  const seat = seatAt(state, index);
  if (!seat) return refuse('SEAT_NOT_FOUND');
  return seatBusy(seat) ?? seat;
}

/** Every application and invitation past its time, expired. */
export function expireSeatRequests(state: VoiceRoomState, ctx: DecideContext): VoiceRoomEvent[] {
  if (state.status !== 'active') return [];
  const due = (r: { expires_at_ms: number }) => r.expires_at_ms <= ctx.nowMs;
  return [
    ...(state.seat_applications ?? [])
      .filter(due)
      .flatMap((a) => endApplicationOf(state, a.user_id, 'expired')),
    ...(state.seat_invitations ?? [])
      .filter(due)
      .flatMap((i) => endInvitationOf(state, i.user_id, 'expired')),
  ];
}

/** The earliest application or invitation deadline, or null. */
export function nextSeatRequestExpiry(state: VoiceRoomState): number | null {
  const times = [...(state.seat_applications ?? []), ...(state.seat_invitations ?? [])].map(
    (r) => r.expires_at_ms,
  );
  return times.length === 0 ? null : Math.min(...times);
}
