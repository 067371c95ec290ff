/** Every refusal of the voice room: a stable reason code, a kind, a message. */
import {
  domainError,
  invalidArgument as badInput,
  type DomainError,
  type ErrorKind,
} from '../../domain/decider.js';

const REASONS = {
  ROOM_NOT_FOUND: ['not_found', 'room not found'],
  ROOM_ALREADY_EXISTS: ['conflict', 'room already exists'],
  ROOM_CLOSED: ['illegal_state', 'room is closed'],
  ROOM_NOT_ACTIVE: ['illegal_state', 'room is not active'],
  USER_BANNED: ['forbidden', 'user is banned from this room'],
  NOT_IN_ROOM: ['illegal_state', 'user is not in the room'],
  NOT_OWNER: ['forbidden', 'only the room owner can do this'],
  NOT_ADMIN: ['forbidden', 'only the room owner or an admin can do this'],
  CANNOT_KICK_OWNER: ['forbidden', 'the owner cannot be kicked'],
  CANNOT_TARGET_OWNER: ['forbidden', 'nobody but the owner can take the owner off the mic'],
  CANNOT_TARGET_SELF: ['validation', 'cannot do this to yourself'],
  NOT_BANNED: ['illegal_state', 'user is not banned'],
  SEAT_NOT_FOUND: ['not_found', 'no such mic seat'],
  SEAT_LOCKED: ['illegal_state', 'mic seat is locked'],
  SEAT_OCCUPIED: ['illegal_state', 'mic seat is taken'],
  ALREADY_ON_SEAT: ['illegal_state', 'user already holds a mic seat'],
  NOT_ON_SEAT: ['illegal_state', 'user holds no mic seat'],
  SEAT_APPLICATION_REQUIRED: [
    'forbidden',
    'seats are taken by application in this room: apply, and wait for the owner or an admin',
  ],
  SEAT_MODE_FREE: ['illegal_state', 'seats are free in this room: take one with MicUp'],
  ALREADY_APPLIED: ['illegal_state', 'user already applied for a seat'],
  NO_SEAT_APPLICATION: ['not_found', 'no pending seat application of this user'],
  NO_FREE_SEAT: ['illegal_state', 'no idle mic seat'],
  SEAT_MUTED: ['forbidden', 'the mic seat is muted by the owner or an admin'],
  ALREADY_INVITED: ['illegal_state', 'user already has a pending seat invitation'],
  NO_SEAT_INVITATION: ['not_found', 'no pending seat invitation for this user'],
  CHAT_MUTED: ['forbidden', 'user is muted in the room chat'],
  MESSAGE_NOT_FOUND: ['not_found', 'no such chat message'],
  MIC_SESSION_MISMATCH: ['illegal_state', 'mic session is not the current one'],
  INSUFFICIENT_BALANCE: ['illegal_state', 'insufficient balance'],
  GIFT_NOT_FOUND: ['not_found', 'no such gift'],
  GIFT_PRICE_CHANGED: ['conflict', 'gift price changed, retry'],
  GIFT_TO_SELF: ['validation', 'cannot send a gift to yourself'],
  AMOUNT_TOO_LARGE: ['validation', 'gift total is too large'],
  /** A balance or price stored outside the API past 2^53 − 1: never answered rounded. */
  AMOUNT_NOT_EXACT: ['internal', 'a stored amount is past 2^53 - 1'],
} as const satisfies Record<string, readonly [ErrorKind, string]>;

export type VoiceRoomReason = keyof typeof REASONS;

export function refuse(reason: VoiceRoomReason, detail?: string): DomainError {
  const [kind, message] = REASONS[reason];
  return domainError(kind, reason, detail ? `${message}: ${detail}` : message);
}

/** INVALID_ARGUMENT (defined for every layer) with which rule failed: a fixed text. */
export function invalidArgument(detail: string): DomainError {
  return badInput(`invalid argument: ${detail}`);
}

/** Every refusal code of the voice room with its kind and message (for the docs' table). */
export const voiceRoomReasons: readonly { code: string; kind: ErrorKind; message: string }[] =
  Object.entries(REASONS).map(([code, [kind, message]]) => ({ code, kind, message }));
