/**
 * What each meeting endpoint of ./commands.ts and ./signal-calls.ts answers, in the seed's
 * field names (meeting-api.md): ids as JSON numbers (a user id that is not decimal stays a
 * string), times as `YYYY-MM-DD HH:mm:ss`. A declaration names its reply; MeetingApi parses
 * every answer with it, its own or a forwarded owner's, so the type a caller gets is the
 * schema's and the OpenAPI document shows exactly what is sent. Objects are strict: a field
 * the schema does not list is an error, not a silent drop.
 */
import { z } from 'zod';

/** A user or participant id: a JSON number (user ids are decimal account ids). */
const JsonId = z.int().positive();
const time = z.string().nullable().describe('YYYY-MM-DD HH:mm:ss, server local time');

export const Room = z
  .strictObject({
    id: z.int().nullable().describe("The meeting's numeric id"),
    room_code: z.string().describe('XXX-XXX-XXX'),
    title: z.string(),
    host_id: JsonId.nullable(),
    type: z.int().describe('1: an instant meeting'),
    has_password: z.boolean(),
    max_members: z.int(),
    status: z.union([z.literal(0), z.literal(1), z.literal(2)]).nullable(),
    status_label: z.enum(['未开始', '进行中', '已结束']).nullable(),
    started_at: time,
    ended_at: time,
    ended_reason: z.string().nullable().describe('host_ended, empty_ttl or system_error'),
    settings: z.string().describe('The settings as a JSON text'),
    created_at: time,
    online_count: z.int(),
  })
  .meta({ title: 'Room' });

export const Participant = z
  .strictObject({
    id: JsonId.nullable(),
    room_id: z.int().nullable(),
    user_id: JsonId,
    role: z.union([z.literal(0), z.literal(1)]).describe('1: the host'),
    role_label: z.enum(['主持人', '参会者']),
    is_active: z.boolean(),
    joined_at: time,
    left_at: time,
    duration: z.int().describe('Seconds in the meeting'),
  })
  .meta({ title: 'Participant' });

export const ChatMessage = z
  .strictObject({
    id: z.int(),
    room_id: z.int().nullable(),
    user_id: JsonId,
    content: z.string(),
    created_at: time,
  })
  .meta({ title: 'ChatMessage' });

/** The meeting's router, for mediasoup-client's `Device.load()`; null without media. */
const router = {
  router_id: z.string().nullable(),
  rtp_capabilities: z
    .looseObject({})
    .nullable()
    .describe("The router's RTP capabilities (mediasoup RtpCapabilities)"),
};

export const CreateMeetingReply = z
  .strictObject({ room: Room, ...router })
  .meta({ title: 'CreateMeetingReply' });

export const JoinMeetingReply = z
  .strictObject({
    room: Room,
    participant: Participant.optional(),
    ...router,
    waiting: z
      .boolean()
      .describe(
        'true: the join waits for the host (the waiting room): no participant and no router ' +
          'yet; meeting.waiting.admitted or meeting.waiting.left follows',
      ),
  })
  .meta({ title: 'JoinMeetingReply' });

export const WaitingEntry = z
  .strictObject({
    user_id: JsonId,
    since: z.string().describe('YYYY-MM-DD HH:mm:ss, server local time: when the join came'),
  })
  .meta({ title: 'WaitingEntry' });
export const WaitingList = z
  .strictObject({ list: z.array(WaitingEntry).readonly() })
  .meta({ title: 'WaitingList' });
export const WaitingDecision = z
  .strictObject({
    user_ids: z.array(JsonId).readonly().describe('Who was admitted (or denied), in order'),
    room: Room,
  })
  .meta({ title: 'WaitingDecision' });
export const RecordingTrack = z
  .strictObject({
    file: z.string(),
    kind: z.enum(['audio', 'video']),
    codec: z.string().describe('opus (in Ogg) or vp8 (in WebM)'),
    user_id: JsonId.nullable(),
    source: z.string().nullable().describe('microphone, camera, screen or screen_audio'),
    start_offset_ms: z.int().describe('When the track starts, after the recording'),
    url: z.string().describe('Its download (GET, with the caller’s token; Range works)'),
  })
  .meta({ title: 'RecordingTrack' });
export const Recording = z
  .strictObject({
    recording_id: z.string(),
    status: z
      .enum(['recording', 'complete', 'interrupted', 'unavailable'])
      .describe('unavailable: its media server does not answer now'),
    started_at: z.string(),
    stopped_at: time,
    duration_ms: z
      .int()
      .nullable()
      .describe('How long it recorded (the media server’s clock); null while it records'),
    tracks: z.array(RecordingTrack).readonly(),
  })
  .meta({ title: 'Recording' });
export const RecordingList = z
  .strictObject({ list: z.array(Recording).readonly() })
  .meta({ title: 'RecordingList' });
export const RecordingSource = z.strictObject({ media_server: z.string().nullable() });
export const MeetingRouter = z.strictObject({ ...router }).meta({ title: 'MeetingRouter' });

export const MeetingPage = z
  .strictObject({ list: z.array(Room).readonly(), has_more: z.boolean() })
  .meta({ title: 'MeetingPage' });

export const MeetingDetail = z
  .strictObject({
    room: Room,
    participants: z.array(Participant).readonly(),
    online_count: z.int(),
  })
  .meta({ title: 'MeetingDetail' });

export const LeaveMeetingReply = z
  .strictObject({ duration: z.int().describe('Seconds in the meeting') })
  .meta({ title: 'LeaveMeetingReply' });

export const EndMeetingReply = z.strictObject({ room: Room }).meta({ title: 'EndMeetingReply' });

export const TransferHostReply = z
  .strictObject({ old_host_id: JsonId.nullable(), new_host_id: JsonId.nullable() })
  .meta({ title: 'TransferHostReply' });

export const KickMemberReply = z
  .strictObject({ user_id: JsonId.nullable(), duration: z.int() })
  .meta({ title: 'KickMemberReply' });

export const InviteMembersReply = z
  .strictObject({
    pushed: z.int().describe('Invitees notified by this request'),
    skipped: z.int().describe('Invitees left out (already notified, or the caller)'),
  })
  .meta({ title: 'InviteMembersReply' });

export const RedeemInviteReply = z
  .strictObject({ room_code: z.string(), inviter_id: JsonId.nullable(), has_password: z.boolean() })
  .meta({ title: 'RedeemInviteReply' });

export const SendChatReply = z
  .strictObject({ message: ChatMessage })
  .meta({ title: 'SendChatReply' });

export const ChatPage = z
  .strictObject({ list: z.array(ChatMessage).readonly(), has_more: z.boolean() })
  .meta({ title: 'ChatPage' });

/** The WebSocket signalling's calls (not on REST). */
export const MeetingMemberReply = z.strictObject({
  is_host: z.boolean(),
  media_server: z.string().nullable(),
  /** Muted while members may not unmute themselves: the media server holds its audio. */
  audio_held: z.boolean(),
  /** Who shares a screen now (a user id in decimal), or null. */
  screen_sharer: z.string().nullable(),
});
export const MediaStateReply = z.strictObject({
  media_server: z.string().nullable(),
  held_user_ids: z.array(z.string()),
  recording_id: z.string().nullable(),
});
export const MoveMediaReply = z.strictObject({ media_server: z.string().nullable() });
export const Done = z.strictObject({});
