/**
 * The voice-room API's request messages, one schema per request message of
 * proto/room/v1/room_service.proto, of the same name and fields (snake_case); ./commands.ts
 * says which RPC takes which. gRPC fills absent scalars with '' and 0, so optional strings
 * treat '' as unset. Shared by the gRPC and REST edges: nothing is coerced, a field of the
 * wrong JSON type is refused, and a required field that is missing is refused.
 */
import { z } from 'zod';
import { UserIdText } from '../../shared/user-id.js';

/** A gift's id. */
const giftId = z.string().regex(/^[A-Za-z0-9_.:@-]{1,64}$/, 'letters, digits and _.:@- (1-64)');
/** A user id, as gRPC carries it: the account id in decimal (REST sends a JSON number). */
const userId = UserIdText;
const optionalUserId = z
  .union([z.literal(''), userId])
  .optional()
  .transform((v) => (v ? v : undefined));
/** A voice room's id, as every call takes it. */
export const voiceRoomId = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'letters, digits and _.:- (1-128)');
const room = {
  app_code: z
    .union([z.literal(''), z.string().regex(/^[a-z0-9_-]{1,64}$/)])
    .optional()
    .transform((v) => v || 'default'),
  room_id: voiceRoomId,
};
const requestId = {
  request_id: z
    .union([z.literal(''), z.string().regex(/^[\x21-\x7e]{1,128}$/, 'printable ASCII (1-128)')])
    .optional()
    .transform((v) => v || undefined),
};
/** Only a JSON (or protobuf) integer: `"1"`, `true`, `[1]` and `null` are refused, never coerced. */
const int = z.int();
/** A seat mode; '' (gRPC's unset) or absent: unset. */
const seatMode = z
  .union([z.literal(''), z.enum(['free', 'apply'])])
  .optional()
  .transform((v) => v || undefined);

export const CreateRoomRequest = z.object({
  app_code: room.app_code,
  room_id: z
    .union([z.literal(''), room.room_id])
    .optional()
    .transform((v) => v || undefined),
  ...requestId,
  owner_user_id: userId,
  title: z.string().min(1).max(100),
  // The room's own limit (ROOMS_MAX_SEATS, at most 50) is the decider's to check.
  seat_count: int.min(1).max(50),
  /** `free` (default) or `apply`. */
  seat_mode: seatMode,
});
/** The fields an owner or admin changes; an absent one stays (an empty announcement clears it). */
export const UpdateRoomRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  title: z
    .union([z.literal(''), z.string().max(100)])
    .optional()
    .transform((v) => v || undefined),
  announcement: z.string().max(500).optional(),
  seat_mode: seatMode,
});
/** A seat application: for one seat, or (absent) any. */
export const ApplyForSeatRequest = z.object({
  ...room,
  ...requestId,
  user_id: userId,
  seat_index: int.min(0).optional(),
});
/**
 * A seat offered to a user: approving their application (on this seat, else the one applied
 * for, else the first idle one) or inviting them (this seat, else any idle one).
 */
export const OfferSeatRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  user_id: userId,
  seat_index: int.min(0).optional(),
});
/** The owner or an admin moves a seat holder to another seat. */
export const MoveToSeatRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  user_id: userId,
  seat_index: int.min(0),
});
export const SetSeatCountRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  // The room's own limit (ROOMS_MAX_SEATS, at most 50) is the decider's to check.
  seat_count: int.min(1).max(50),
});
export const SetSeatMutedRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  seat_index: int.min(0),
  muted: z.boolean(),
});
export const SetMicMutedRequest = z.object({
  ...room,
  ...requestId,
  user_id: userId,
  muted: z.boolean(),
});
export const ListSeatApplicationsRequest = z.object({ ...room, user_id: userId });
export const OperatorRequest = z.object({ ...room, ...requestId, operator_user_id: userId });
export const UserRequest = z.object({ ...room, ...requestId, user_id: userId });
export const ManageUserRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  user_id: userId,
});
export const SetRoomAdminRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  user_id: userId,
  is_admin: z.boolean(),
});
export const SetMicSeatLockRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  seat_index: int.min(0),
  locked: z.boolean(),
});
export const SeatRequest = z.object({
  ...room,
  ...requestId,
  user_id: userId,
  seat_index: int.min(0),
});
export const MicDownRequest = z.object({
  ...room,
  ...requestId,
  user_id: userId,
  operator_user_id: optionalUserId,
});
export const ConfirmMicPublishingRequest = z.object({
  ...room,
  ...requestId,
  user_id: userId,
  mic_session_id: z.string().min(1).max(64),
});
export const RtcEventRequest = z.object({
  ...room,
  ...requestId,
  user_id: userId,
  event_time_ms: int.min(0),
  mic_session_id: z
    .union([z.literal(''), z.string().max(64)])
    .optional()
    .transform((v) => v || undefined),
});
export const SendGiftRequest = z.object({
  ...room,
  ...requestId,
  sender_user_id: userId,
  receiver_user_ids: z.array(userId).min(1).max(20),
  gift_id: giftId,
  count: int.min(1).max(9999),
});
export const GetRoomRequest = z.object({ ...room });
/**
 * A members page's size: `default` when none is given, at least `min`, and a larger one is
 * cut to `max` (one page of a big room stays small; asking for more is no error).
 */
export const MEMBER_PAGE = { default: 50, min: 1, max: 200 } as const;
export const ListMembersRequest = z.object({
  ...room,
  /** The page starts after this member; absent ('' over gRPC): from the first. */
  after: optionalUserId,
  // proto3 sends an unset limit as 0, so 0 takes the default; REST refuses an explicit 0
  // before this (its query parameter's `min`, ./commands.ts).
  limit: int
    .min(0)
    .optional()
    .transform((v) => (v ? Math.min(v, MEMBER_PAGE.max) : MEMBER_PAGE.default)),
});
const mediaServerId = z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'a media server id');
export const MoveMediaServerRequest = z.object({
  ...room,
  ...requestId,
  from_server: mediaServerId,
  to_server: mediaServerId,
});
export const CheckRoomAccessRequest = z.object({
  ...room,
  user_id: userId,
  action: z.enum(['join', 'view', 'speak', 'gift', 'manage']),
});

/**
 * The request fields that name users, and how many: JSON (REST) sends them as numbers, which
 * the REST edge turns into the decimal text the schemas above take.
 */
export const USER_FIELDS = {
  owner_user_id: 'one',
  operator_user_id: 'one',
  user_id: 'one',
  sender_user_id: 'one',
  receiver_user_ids: 'many',
} as const;

/** A field that names one user (`user_id`, `operator_user_id`, …). */
export type OneUserField = {
  [K in keyof typeof USER_FIELDS]: (typeof USER_FIELDS)[K] extends 'one' ? K : never;
}[keyof typeof USER_FIELDS];

// ---- Public chat (公屏) and rankings ----

export const SendRoomMessageRequest = z.object({
  ...room,
  ...requestId,
  user_id: userId,
  // The decider's rule (1-500 characters once trimmed, no control characters) has the last word.
  content: z.string().max(2000),
});
export const MuteChatUserRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  user_id: userId,
  /** 0 lifts the mute. */
  duration_s: int.min(0).max(30 * 86_400),
});
export const DeleteRoomMessageRequest = z.object({
  ...room,
  ...requestId,
  operator_user_id: userId,
  message_id: int.min(1).max(Number.MAX_SAFE_INTEGER),
});
/** A history page's size: like a members page's. */
export const MESSAGE_PAGE = { default: 30, min: 1, max: 100 } as const;
export const ListRoomMessagesRequest = z.object({
  ...room,
  user_id: userId,
  /** Messages older than this id; absent (0 over gRPC): from the newest. */
  before_id: int
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .transform((v) => v || undefined),
  limit: int
    .min(0)
    .optional()
    .transform((v) => (v ? Math.min(v, MESSAGE_PAGE.max) : MESSAGE_PAGE.default)),
});
export const RANKING_PAGE = { default: 10, min: 1, max: 100 } as const;
export const GetRankingsRequest = z.object({
  ...room,
  board: z.enum(['contribution', 'charm']),
  period: z.enum(['day', 'all']),
  limit: int
    .min(0)
    .optional()
    .transform((v) => (v ? Math.min(v, RANKING_PAGE.max) : RANKING_PAGE.default)),
});
