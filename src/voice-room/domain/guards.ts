/** Guards shared by the deciders, and the read-side guard query CheckRoomAccess. */
import type { DomainError } from '../../domain/decider.js';
import { refuse } from './errors.js';
import { presenceOf } from './evolve.js';
import type { MicSeat, VoiceRoomState } from './types.js';

/** Only `active` rooms accept join, management, mic and gift commands. */
export function mustBeActive(state: VoiceRoomState): DomainError | null {
  switch (state.status) {
    case 'active':
      return null;
    case 'absent':
      return refuse('ROOM_NOT_FOUND');
    case 'closed':
      return refuse('ROOM_CLOSED');
    default:
      return refuse('ROOM_NOT_ACTIVE', state.status);
  }
}

export function isPresent(state: VoiceRoomState, userId: string): boolean {
  return presenceOf(state, userId)?.state === 'present';
}

export function mustBePresent(state: VoiceRoomState, userId: string): DomainError | null {
  return isPresent(state, userId) ? null : refuse('NOT_IN_ROOM', userId);
}

/** A banned admin (kicked by the owner) manages nothing, not even their own unban. */
export function isOwnerOrAdmin(state: VoiceRoomState, userId: string): boolean {
  return (
    state.owner_user_id === userId ||
    (state.admins.includes(userId) && !state.banned.includes(userId))
  );
}

export function mustBeOwnerOrAdmin(state: VoiceRoomState, userId: string): DomainError | null {
  return isOwnerOrAdmin(state, userId) ? null : refuse('NOT_ADMIN');
}

/**
 * The kick rule, for every action that removes someone else (KickUser, a forced MicDown,
 * locking their seat): the owner may act on anyone, an admin only on plain members, and
 * nobody on the owner. Checked after {@link mustBeOwnerOrAdmin}, for a target who is not
 * the operator.
 */
export function mustOutrank(
  state: VoiceRoomState,
  operatorUserId: string,
  targetUserId: string,
  ownerReason: 'CANNOT_KICK_OWNER' | 'CANNOT_TARGET_OWNER',
): DomainError | null {
  if (targetUserId === state.owner_user_id) return refuse(ownerReason);
  if (state.admins.includes(targetUserId) && operatorUserId !== state.owner_user_id) {
    return refuse('NOT_OWNER');
  }
  return null;
}

export function seatOf(state: VoiceRoomState, userId: string): MicSeat | undefined {
  return state.seats.find((s) => s.user_id === userId);
}

export function seatAt(state: VoiceRoomState, index: number): MicSeat | undefined {
  return Number.isInteger(index) ? state.seats[index] : undefined;
}

export type RoomAction = 'join' | 'view' | 'speak' | 'gift' | 'manage';

/**
 * CheckRoomAccess: may `userId` do `action` in this room now? Refuses closed rooms, banned
 * users, and (for everything but joining) users who are not present.
 */
export function checkRoomAccess(
  state: VoiceRoomState,
  userId: string,
  action: RoomAction,
): DomainError | null {
  if (state.status === 'absent') return refuse('ROOM_NOT_FOUND');
  if (state.status === 'closed') return refuse('ROOM_CLOSED');
  if (state.status !== 'active') return refuse('ROOM_NOT_ACTIVE', state.status);
  if (state.banned.includes(userId)) return refuse('USER_BANNED');
  if (action === 'join') return null;
  if (!isPresent(state, userId)) return refuse('NOT_IN_ROOM', userId);
  if (action === 'manage') return mustBeOwnerOrAdmin(state, userId);
  return null;
}
