/**
 * The `data` of each frame ./voice-frames.ts makes of a committed voice-room event, declared.
 * A room frame's data is the event's own fields (its `type` aside, user ids as JSON numbers:
 * ./json.ts), so each schema here is checked, at compile time, to be exactly its event's
 * fields (../domain/types.ts): an event
 * that gains or loses a field fails the build until its schema follows. The AsyncAPI
 * document (src/edge/ws/asyncapi.ts) shows them.
 */
import { z } from 'zod';
import type { VoiceRoomEvent } from '../domain/types.js';
import { JsonUserId } from '../../shared/user-id.js';
import type { WithJsonUserIds } from './json.js';

const user_id = JsonUserId;
const operator_user_id = JsonUserId;
const at_ms = z.int().describe('Server clock, epoch ms');
const mic_session_id = z.string();

const LeftData = z.strictObject({ user_id, at_ms, reason: z.enum(['leave', 'stale']) });

/** Per framed event type, its frame's data. */
export const VOICE_EVENT_DATA = {
  RoomClosed: z.strictObject({ operator_user_id, at_ms }),
  UserJoined: z.strictObject({ user_id, at_ms }),
  // Both are `voice.member.left`, told apart by `reason` (the mapper adds it).
  UserLeft: LeftData,
  PresenceStale: LeftData,
  UserKicked: z.strictObject({ user_id, operator_user_id }),
  UserUnbanned: z.strictObject({ user_id, operator_user_id }),
  RoomAdminSet: z.strictObject({ user_id, is_admin: z.boolean() }),
  MicSeatLockSet: z.strictObject({ seat_index: z.int(), locked: z.boolean() }),
  MicTakenUp: z.strictObject({
    user_id,
    seat_index: z.int(),
    mic_session_id,
    mic_session_room_version: z.int(),
    publish_deadline_ms: z.int(),
    at_ms,
  }),
  MicSeatChanged: z.strictObject({
    user_id,
    from_seat_index: z.int(),
    seat_index: z.int(),
    mic_session_id,
    publish_deadline_ms: z.int(),
    operator_user_id: operator_user_id.optional().describe('Who moved the user (MoveToSeat)'),
  }),
  MicPublishingConfirmed: z.discriminatedUnion('source', [
    z.strictObject({
      user_id,
      seat_index: z.int(),
      mic_session_id,
      source: z.literal('rtc'),
      event_time_ms: z.int().describe('The RTC provider’s clock'),
    }),
    z.strictObject({
      user_id,
      seat_index: z.int(),
      mic_session_id,
      source: z.literal('client'),
      at_ms,
      event_time_ms: z.int().optional().describe('Older logs only'),
    }),
  ]),
  MicReleased: z.strictObject({
    user_id,
    seat_index: z.int(),
    mic_session_id,
    reason: z.enum([
      'mic_down',
      'forced_down',
      'leave',
      'kicked',
      'seat_locked',
      'stale',
      'publish_timeout',
      'audio_stopped',
      'room_exited',
      'room_closed',
    ]),
    event_time_ms: z.int().optional().describe('The RTC provider’s clock'),
  }),
  RoomUpdated: z.strictObject({
    operator_user_id,
    title: z.string().optional(),
    announcement: z.string().optional().describe("'' cleared it"),
    seat_mode: z.enum(['free', 'apply']).optional(),
  }),
  SeatApplied: z.strictObject({
    user_id,
    seat_index: z.int().nullable().describe('The seat asked for; null: any'),
    at_ms,
    expires_at_ms: z.int().describe('Server clock'),
  }),
  SeatCountSet: z.strictObject({ seat_count: z.int(), operator_user_id }),
  MicMuteSet: z.strictObject({ user_id, muted: z.boolean() }),
  SeatMuteSet: z.strictObject({
    seat_index: z.int(),
    muted: z.boolean(),
    operator_user_id,
    publish_deadline_ms: z.int().optional().describe('Unmuting a pending seat: its new deadline'),
  }),
  SeatInvited: z.strictObject({
    user_id,
    seat_index: z.int().nullable().describe('The seat offered; null: any idle one'),
    operator_user_id,
    at_ms,
    expires_at_ms: z.int().describe('Server clock'),
  }),
  SeatInvitationEnded: z.strictObject({
    user_id,
    reason: z.enum([
      'accepted',
      'declined',
      'expired',
      'left',
      'stale',
      'kicked',
      'seated',
      'room_closed',
    ]),
  }),
  SeatApplicationEnded: z.strictObject({
    user_id,
    reason: z.enum([
      'approved',
      'rejected',
      'cancelled',
      'expired',
      'left',
      'stale',
      'kicked',
      'seated',
      'seat_mode_changed',
      'room_closed',
    ]),
    operator_user_id: operator_user_id.optional().describe('Who approved or rejected it'),
  }),
  GiftSent: z.strictObject({
    sender_user_id: JsonUserId,
    receiver_user_ids: z.array(JsonUserId).readonly(),
    gift_id: z.string(),
    count: z.int(),
    unit_price: z.int(),
    total_price: z.int(),
  }),
  RoomMessageSent: z.strictObject({
    message_id: z.int().describe('1, 2, 3… in the room (the history cursor)'),
    user_id,
    user_name: z.string().describe("The sender's nickname"),
    content: z.string(),
    at_ms,
  }),
  ChatMuteSet: z.strictObject({
    user_id,
    operator_user_id,
    muted_until_ms: z.int().nullable().describe('Server clock: the mute ends then; null: lifted'),
    at_ms,
  }),
  RoomMessageDeleted: z.strictObject({ message_id: z.int(), operator_user_id }),
} as const;

/** Targeted frames (one user's sockets, who then stop following the room). */
export const VOICE_USER_FRAMES = {
  'voice.kicked': z.strictObject({ room_id: z.string(), operator_user_id }),
  'voice.left': z.strictObject({ room_id: z.string(), reason: z.enum(['leave', 'stale']) }),
} as const;

// ---- Compile-time: each schema is exactly its event's fields. ----

type Data = typeof VOICE_EVENT_DATA;
/** An event's fields without `type` (per member of a union, so no variant's field is lost). */
type Fields<T> = T extends { readonly type: unknown } ? Omit<T, 'type'> : never;
type FieldsOf<K> = Fields<Extract<VoiceRoomEvent, { type: K }>>;
/** The frame's data as the mapper makes it: the fields, plus `reason` for the two leaves. */
type Framed<K extends keyof Data> = WithJsonUserIds<
  K extends 'UserLeft' | 'PresenceStale' ? FieldsOf<K> & { reason: 'leave' | 'stale' } : FieldsOf<K>
>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Check = { [K in keyof Data]: Same<z.output<Data[K]>, Framed<K>> };
const _exact: { [K in keyof Data]: true } = {} as Check;
void _exact;
