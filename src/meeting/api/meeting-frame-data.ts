/**
 * The `data` of each frame ./meeting-frames.ts makes of a committed meeting event, declared:
 * the mapper builds each frame through {@link meetingFrame}, typed by these schemas, and the
 * AsyncAPI document (src/edge/ws/asyncapi.ts) shows them. The participant and the chat
 * message are the REST answers' own schemas (./replies.ts).
 */
import { z } from 'zod';
import type { MappedFrame } from '../../realtime/frames.js';
import type { AutoReason, EndedReason, LeftReason, WaitingLeftReason } from '../domain/types.js';
import { ChatMessage, Participant } from './replies.js';

/** A user id: a JSON number (./render.ts `idJson`). */
const JsonId = z.int().positive().nullable();
const room_code = z.string().describe('XXX-XXX-XXX');

const leftReason = z.enum(['leave', 'kicked', 'host_end', 'system_error']);
const autoReason = z.enum(['host_left_with_members', 'host_grace_expired', 'empty_room_revived']);
const endedReason = z.enum(['host_ended', 'empty_ttl', 'system_error']);
// Each enum is exactly its domain type (a reason added there must be added here).
const _reasons: [LeftReason, AutoReason, EndedReason] = [] as unknown as [
  z.output<typeof leftReason>,
  z.output<typeof autoReason>,
  z.output<typeof endedReason>,
];
void _reasons;

/** Room event frames (the meeting's followers; with the room frame keys). */
export const MEETING_ROOM_FRAMES = {
  'meeting.member.joined': z.strictObject({ room_code, participant: Participant }),
  'meeting.member.left': z.strictObject({ room_code, user_id: JsonId, reason: leftReason }),
  'meeting.host.changed': z.strictObject({
    room_code,
    old_host_id: JsonId,
    new_host_id: JsonId,
    auto_reason: autoReason.optional().describe('absent: the host transferred it'),
  }),
  'meeting.room.ended': z.strictObject({ room_code, reason: endedReason }),
  'meeting.member.state.changed': z.strictObject({
    room_code,
    user_id: JsonId,
    audio_enabled: z.boolean().optional(),
    video_enabled: z.boolean().optional(),
    hand_raised: z.boolean().optional(),
    screen_sharing: z
      .boolean()
      .optional()
      .describe('Beyond the seed: the member started (true) or stopped sharing a screen'),
    actor_id: JsonId,
  }),
  // The seed: "载荷为响应中的 message 对象", plus the room code.
  'meeting.chat': ChatMessage.extend({ room_code }),
  // Beyond the seed: the host's controls.
  'meeting.room.locked': z.strictObject({
    room_code,
    locked: z.boolean().describe('true: nobody new may join'),
    actor_id: JsonId,
  }),
  'meeting.room.self_unmute': z.strictObject({
    room_code,
    allowed: z.boolean().describe('false: members may not unmute themselves (after a mute-all)'),
    actor_id: JsonId,
  }),
  'meeting.recording.started': z.strictObject({
    room_code,
    recording_id: z.string(),
    actor_id: JsonId,
  }),
  'meeting.recording.stopped': z.strictObject({
    room_code,
    recording_id: z.string(),
    reason: z.enum(['stopped', 'meeting_ended']),
  }),
  'meeting.room.waiting_room': z.strictObject({
    room_code,
    enabled: z.boolean().describe('true: joins wait for the host to admit them'),
    actor_id: JsonId,
  }),
} as const;

const waitingLeftReason = z.enum(['denied', 'expired', 'left', 'meeting_ended']);
const _waiting: WaitingLeftReason = '' as z.output<typeof waitingLeftReason>;
void _waiting;

/** Targeted frames (one user's sockets). */
export const MEETING_USER_FRAMES = {
  'meeting.member.kicked': z.strictObject({ room_code, reason: z.literal('kicked') }),
  // Beyond the seed: the waiting room. To the host: someone waits; to the joiner and the
  // host: the wait ended without admission; to the joiner: admitted (a member now).
  'meeting.waiting.joined': z.strictObject({ room_code, user_id: JsonId }),
  'meeting.waiting.left': z.strictObject({ room_code, user_id: JsonId, reason: waitingLeftReason }),
  'meeting.waiting.admitted': z.strictObject({ room_code, user_id: JsonId }),
} as const;

type RoomFrames = typeof MEETING_ROOM_FRAMES;
type UserFrames = typeof MEETING_USER_FRAMES;

/** A room event frame of the meeting, its data of the declared type. */
export function meetingFrame<E extends keyof RoomFrames>(
  event: E,
  data: z.input<RoomFrames[E]>,
  endsFollows?: true,
): MappedFrame {
  return { to: 'room', event, data, ...(endsFollows ? { endsFollows } : {}) };
}

/**
 * A targeted frame of the meeting; `unfollowRoom` (the default) also ends that user's
 * follow, as a kick does; a notice (the waiting room's) leaves it.
 */
export function meetingUserFrame<E extends keyof UserFrames>(
  userId: string,
  event: E,
  data: z.input<UserFrames[E]>,
  unfollowRoom = true,
): MappedFrame {
  return { to: 'user', userId, event, data, ...(unfollowRoom ? { unfollowRoom } : {}) };
}
