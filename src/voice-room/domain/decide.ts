/** The voice room's decider: routes each command to its function, guard first. */
import type { DecideContext, Decision } from '../../domain/decider.js';
import { deleteRoomMessage, muteChatUser, sendRoomMessage } from './decide-chat.js';
import { invalidArgument, refuse } from './errors.js';
import {
  changeMicSeat,
  moveToSeat,
  setMicMuted,
  setSeatCount,
  setSeatMuted,
  confirmMicPublishing,
  expirePublishDeadlines,
  micDown,
  micUp,
  rtcAudioStarted,
  rtcAudioStopped,
  rtcRoomExited,
  setMicSeatLock,
} from './decide-mic.js';
import {
  closeRoom,
  createRoom,
  expireStalePresence,
  heartbeat,
  joinRoom,
  kickUser,
  leaveRoom,
  moveMediaServer,
  setRoomAdmin,
  unbanUser,
  updateRoom,
} from './decide-room.js';
import {
  applyForSeat,
  approveSeatApplication,
  cancelSeatApplication,
  acceptSeatInvitation,
  declineSeatInvitation,
  expireSeatRequests,
  inviteToSeat,
  nextSeatRequestExpiry,
  rejectSeatApplication,
} from './decide-seats.js';
import { assertNever, evolveVoiceRoom } from './evolve.js';
import { mustBeActive, mustBePresent } from './guards.js';
import { earliestLastSeen } from './presence-book.js';
import type {
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from './types.js';

export function decideVoiceRoom(
  state: VoiceRoomState,
  command: VoiceRoomCommand,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): Decision<VoiceRoomEvent> {
  switch (command.type) {
    case 'CreateRoom':
      return createRoom(state, command, ctx, settings);
    case 'CloseRoom':
      return closeRoom(state, command, ctx);
    case 'UpdateRoom':
      return updateRoom(state, command);
    case 'ApplyForSeat':
      return applyForSeat(state, command, ctx, settings);
    case 'CancelSeatApplication':
      return cancelSeatApplication(state, command);
    case 'ApproveSeatApplication':
      return approveSeatApplication(state, command, ctx, settings);
    case 'RejectSeatApplication':
      return rejectSeatApplication(state, command);
    case 'MoveToSeat':
      return moveToSeat(state, command, ctx, settings);
    case 'SetSeatCount':
      return setSeatCount(state, command, settings);
    case 'SetSeatMuted':
      return setSeatMuted(state, command, ctx, settings);
    case 'SetMicMuted':
      return setMicMuted(state, command);
    case 'InviteToSeat':
      return inviteToSeat(state, command, ctx, settings);
    case 'AcceptSeatInvitation':
      return acceptSeatInvitation(state, command, ctx, settings);
    case 'DeclineSeatInvitation':
      return declineSeatInvitation(state, command);
    case 'JoinRoom':
      return joinRoom(state, command, ctx, settings);
    case 'LeaveRoom':
      return leaveRoom(state, command, ctx, settings);
    case 'RoomHeartbeat':
      return heartbeat(state, command, ctx);
    case 'KickUser':
      return kickUser(state, command);
    case 'UnbanUser':
      return unbanUser(state, command);
    case 'SetRoomAdmin':
      return setRoomAdmin(state, command);
    case 'SetMicSeatLock':
      return setMicSeatLock(state, command);
    case 'MicUp':
      return micUp(state, command, ctx, settings);
    case 'MicDown':
      return micDown(state, command);
    case 'ChangeMicSeat':
      return changeMicSeat(state, command, ctx, settings);
    case 'ConfirmMicPublishing':
      return confirmMicPublishing(state, command, ctx);
    case 'RtcAudioStarted':
      return rtcAudioStarted(state, command);
    case 'RtcAudioStopped':
      return rtcAudioStopped(state, command);
    case 'RtcRoomExited':
      return rtcRoomExited(state, command);
    case 'SendGift':
      return sendGift(state, command);
    case 'SendRoomMessage':
      return sendRoomMessage(state, command, ctx);
    case 'MuteChatUser':
      return muteChatUser(state, command, ctx);
    case 'DeleteRoomMessage':
      return deleteRoomMessage(state, command);
    case 'ExpireDeadlines':
      return expireDeadlines(state, ctx, settings);
    case 'MoveMediaServer':
      return moveMediaServer(state, command, ctx);
    default:
      return assertNever(command);
  }
}

function sendGift(
  state: VoiceRoomState,
  cmd: Extract<VoiceRoomCommand, { type: 'SendGift' }>,
): Decision<VoiceRoomEvent> {
  const guard = mustBeActive(state) ?? mustBePresent(state, cmd.sender_user_id);
  if (guard) return guard;
  const receivers = cmd.receiver_user_ids;
  if (
    receivers.length < 1 ||
    receivers.length > 20 ||
    new Set(receivers).size !== receivers.length
  ) {
    return invalidArgument('1-20 distinct receivers');
  }
  if (receivers.includes(cmd.sender_user_id)) return refuse('GIFT_TO_SELF');
  if (!Number.isInteger(cmd.count) || cmd.count < 1 || cmd.count > 9999) {
    return invalidArgument('count 1-9999');
  }
  if (!Number.isInteger(cmd.unit_price) || cmd.unit_price < 0) {
    return invalidArgument('unit_price');
  }
  // Money must stay exact: beyond 2^53 - 1 a double rounds, and the ledger would not add up.
  const total_price = cmd.unit_price * cmd.count * receivers.length;
  if (!Number.isSafeInteger(total_price)) {
    return refuse(
      'AMOUNT_TOO_LARGE',
      `unit_price × count × receivers must be at most ${Number.MAX_SAFE_INTEGER}`,
    );
  }
  for (const receiver of receivers) {
    const absent = mustBePresent(state, receiver);
    if (absent) return absent;
  }
  return [
    {
      type: 'GiftSent',
      sender_user_id: cmd.sender_user_id,
      receiver_user_ids: receivers,
      gift_id: cmd.gift_id,
      count: cmd.count,
      unit_price: cmd.unit_price,
      total_price,
    },
  ];
}

/**
 * Every deadline due at ctx.nowMs: stale presence first (which ends its applications),
 * then publish timeouts, then the applications and invitations still pending past their time.
 */
function expireDeadlines(
  state: VoiceRoomState,
  ctx: DecideContext,
  settings: VoiceRoomSettings,
): VoiceRoomEvent[] {
  const stale = expireStalePresence(state, ctx, settings);
  const afterStale = stale.reduce(evolveVoiceRoom, state);
  const timedOut = expirePublishDeadlines(afterStale, ctx);
  const afterTimeouts = timedOut.reduce(evolveVoiceRoom, afterStale);
  return [...stale, ...timedOut, ...expireSeatRequests(afterTimeouts, ctx)];
}

/** The earliest stale-presence, publish or seat-application deadline, or null. */
export function nextVoiceRoomDeadline(
  state: VoiceRoomState,
  settings: VoiceRoomSettings,
): number | null {
  if (state.status !== 'active') return null;
  let next = Infinity;
  // The presence that goes stale first is the one seen longest ago: the book keeps its time.
  const oldest = earliestLastSeen(state.presence);
  if (oldest !== null) next = oldest + settings.presenceTimeoutMs;
  for (const seat of state.seats) {
    if (seat.state === 'pending_publish' && seat.publish_deadline_ms !== null && !seat.muted) {
      next = Math.min(next, seat.publish_deadline_ms);
    }
  }
  next = Math.min(next, nextSeatRequestExpiry(state) ?? Infinity);
  return next === Infinity ? null : next;
}
