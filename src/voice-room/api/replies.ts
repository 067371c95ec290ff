/**
 * What each RPC of ./commands.ts answers, one schema per reply message of
 * proto/room/v1/room_service.proto, of the same name and fields. A declaration names its
 * reply; the API parses every answer with it, its own or a forwarded owner's, so the type a
 * caller gets is the schema's and the OpenAPI document shows exactly what is sent. Objects
 * are strict: a field the schema does not list is an error, not a silent drop. User ids are
 * JSON numbers here (gRPC sends them in decimal: its string fields take the number's text).
 */
import { z } from 'zod';
import { JsonUserId } from '../../shared/user-id.js';

const version = z.int().nonnegative().describe("The room's version after the command");

export const CommandReply = z
  .strictObject({
    room_version: version,
    duplicate: z
      .boolean()
      .describe('A retry of a request id already decided: this is its first answer'),
  })
  .meta({ title: 'VoiceCommandReply' });

export const CreateRoomReply = CommandReply.extend({
  room_id: z.string().describe('The new room (derived from the request id when none was given)'),
}).meta({ title: 'VoiceCreateRoomReply' });

/** The caller's seat after the command; absent when the caller holds none (a refused retry). */
export const MicReply = CommandReply.extend({
  seat_index: z.int().optional(),
  state: z.enum(['idle', 'locked', 'pending_publish', 'publishing']).optional(),
  mic_session_id: z.string().nullable().optional(),
  publish_deadline_ms: z.int().nullable().optional(),
}).meta({ title: 'VoiceMicReply' });

export const GiftReply = CommandReply.extend({
  total_price: z.int().describe('What the gifts cost, from the catalog'),
  balance: z.int().describe("The sender's balance right after the charge"),
}).meta({ title: 'GiftResult' });

/** A media move: where the room's router is now (this move's target, or an earlier one's). */
export const MoveMediaReply = CommandReply.extend({
  media_server: z.string().nullable(),
}).meta({ title: 'VoiceMoveMediaReply' });

const Member = z
  .strictObject({
    user_id: JsonUserId,
    joined_at_ms: z.int(),
    last_seen_at_ms: z.int(),
  })
  .meta({ title: 'Member' });

const Seat = z
  .strictObject({
    seat_index: z.int(),
    state: z.enum(['idle', 'locked', 'pending_publish', 'publishing']),
    user_id: JsonUserId.nullable(),
    mic_session_id: z.string().nullable(),
    publish_deadline_ms: z.int().nullable(),
    muted: z.boolean().describe('Muted by the owner or an admin (禁麦): its holder is not heard'),
  })
  .meta({ title: 'Seat' });

export const Room = z
  .strictObject({
    app_code: z.string(),
    room_id: z.string(),
    status: z.enum(['absent', 'creating', 'active', 'closing', 'closed']),
    room_version: version,
    owner_user_id: JsonUserId.nullable(),
    title: z.string(),
    announcement: z.string().describe("'' when none"),
    seat_mode: z
      .enum(['free', 'apply'])
      .describe(
        'free: MicUp takes an idle seat; apply: members apply, the owner or an admin approves',
      ),
    seat_application_count: z.int().describe('Pending seat applications'),
    mic_muted: z
      .array(JsonUserId)
      .readonly()
      .describe('Present members who muted their own microphone'),
    seat_invitations: z
      .array(
        z
          .strictObject({
            user_id: JsonUserId,
            seat_index: z.int().nullable().describe('The seat offered; null: any idle one'),
            operator_user_id: JsonUserId,
            expires_at_ms: z.int(),
          })
          .meta({ title: 'SeatInvitation' }),
      )
      .readonly()
      .describe('Pending seat invitations, oldest first'),
    created_at_ms: z.int().nullable(),
    closed_at_ms: z.int().nullable(),
    admins: z.array(JsonUserId).readonly(),
    banned: z.array(JsonUserId).readonly(),
    online_count: z.int(),
    members: z.array(Member).readonly(),
    seats: z.array(Seat).readonly(),
  })
  .meta({ title: 'VoiceRoom' });

export const MemberPage = z
  .strictObject({
    app_code: z.string(),
    room_id: z.string(),
    online_count: z.int().describe('How many members are present (on every page)'),
    members: z.array(Member).readonly().describe('In user id order, after `after`'),
    next_after: JsonUserId.nullable().describe(
      "The page's last member when more follow (the next page's `after`); null on the last page",
    ),
  })
  .meta({ title: 'VoiceMemberPage' });

const SeatApplication = z
  .strictObject({
    user_id: JsonUserId,
    seat_index: z.int().nullable().describe('The seat asked for; null: any'),
    applied_at_ms: z.int(),
    expires_at_ms: z.int().describe('Server clock: the application expires then'),
  })
  .meta({ title: 'SeatApplication' });

/** The caller's pending application; absent when it has none (a refused retry). */
export const ApplyForSeatReply = CommandReply.extend({
  seat_index: z.int().nullable().optional(),
  applied_at_ms: z.int().optional(),
  expires_at_ms: z.int().optional(),
}).meta({ title: 'VoiceApplyForSeatReply' });

export const SeatApplications = z
  .strictObject({
    app_code: z.string(),
    room_id: z.string(),
    applications: z.array(SeatApplication).readonly().describe('Oldest first'),
  })
  .meta({ title: 'VoiceSeatApplications' });

export const RoomMediaReply = z
  .strictObject({ media_server: z.string().describe("'' when the room has none") })
  .meta({ title: 'VoiceRoomMediaReply' });

export const CheckRoomAccessReply = z
  .strictObject({
    allowed: z.boolean(),
    reason: z.string().describe("The refusal's code ('' when allowed)"),
    message: z.string(),
  })
  .meta({ title: 'VoiceCheckRoomAccessReply' });

/** The lobby, the wallet and the gift picker: REST reads outside the cells. */
export const LobbyPage = z
  .strictObject({
    list: z
      .array(
        z.strictObject({
          room_id: z.string(),
          title: z.string(),
          owner_user_id: JsonUserId,
          online_count: z.int(),
          mic_count: z.int().describe('Seats publishing or about to'),
          created_at_ms: z.int(),
        }),
      )
      .readonly(),
    has_more: z.boolean(),
  })
  .meta({ title: 'VoiceLobbyPage' });

export const Wallet = z.strictObject({ balance: z.int() }).meta({ title: 'VoiceWallet' });

export const GiftList = z
  .strictObject({
    list: z
      .array(z.strictObject({ gift_id: z.string(), name: z.string(), price: z.int() }))
      .readonly(),
  })
  .meta({ title: 'VoiceGiftList' });

export const SendRoomMessageReply = CommandReply.extend({
  message_id: z.int().describe('The message in the room: 1, 2, 3… (the history cursor)'),
  at_ms: z.int().describe('Server clock, epoch ms'),
}).meta({ title: 'VoiceSendRoomMessageReply' });

const RoomMessage = z
  .strictObject({
    message_id: z.int(),
    user_id: JsonUserId,
    user_name: z.string().describe("The sender's nickname when it was sent"),
    content: z.string(),
    at_ms: z.int().describe('Server clock, epoch ms'),
  })
  .meta({ title: 'VoiceRoomMessage' });

export const RoomMessagePage = z
  .strictObject({
    app_code: z.string(),
    room_id: z.string(),
    messages: z.array(RoomMessage).readonly().describe('Newest first; deleted ones left out'),
    has_more: z
      .boolean()
      .describe("Older ones follow: ask again with the last one's id as `before_id`"),
  })
  .meta({ title: 'VoiceRoomMessagePage' });

const RankingEntry = z
  .strictObject({
    rank: z.int().describe('1 for the largest total; equal totals: the earlier to reach it first'),
    user_id: JsonUserId,
    user_name: z.string().describe("The account's nickname now ('' when unknown)"),
    total: z.int().describe('Gift value sent (contribution) or received (charm)'),
  })
  .meta({ title: 'VoiceRankingEntry' });

export const Rankings = z
  .strictObject({
    app_code: z.string(),
    room_id: z.string(),
    board: z.enum(['contribution', 'charm']),
    period: z.enum(['day', 'all']),
    day: z.string().describe("The day counted (YYYY-MM-DD, the rankings' time zone); '' for all"),
    entries: z.array(RankingEntry).readonly(),
  })
  .meta({ title: 'VoiceRankings' });
