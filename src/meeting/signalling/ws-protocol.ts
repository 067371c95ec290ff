/**
 * The meeting's part of `/ws` (meeting-api.md, "WebSocket 信令协议"), declared: the seed's 9
 * C→S events (./signalling.ts registers exactly these, the hub checks their payloads with
 * these schemas) and every S→C frame a meeting sends: its committed events
 * (../api/meeting-frame-data.ts), the signalling's own frames (./frames.ts) and the media
 * reset. The AsyncAPI document (src/edge/ws/asyncapi.ts) is made from them.
 */
import { MEDIA_RESET_FRAMES } from '../../edge/room-media/media-reset.js';
import { ACTIVE_SPEAKER, ActiveSpeakerData } from './active-speaker.js';
import { mediaPayloads } from '../../edge/room-media/schemas.js';
import { mediaWsEvents } from '../../edge/room-media/ws-events.js';
import {
  CELL_CALL_REASONS,
  Empty,
  wsEvent,
  wsFrame,
  type ErrorName,
  type WsProtocol,
} from '../../edge/ws/ws-declarations.js';
import { MEETING_ROOM_FRAMES, MEETING_USER_FRAMES } from '../api/meeting-frame-data.js';
import type { MeetingReason } from '../domain/errors.js';
import { signalCalls } from '../api/signal-calls.js';
import { MEMBER_LEFT, PRODUCER_NEW, ProducerNewData, WsLeftData } from './frames.js';
import {
  ConsumerPreferencesPayload,
  MemberStatePayload,
  roomCode,
  RoomPayload,
} from './schemas.js';

type Reason = ErrorName | MeetingReason;

/** Every meeting event asks the meeting (on its owner) whether the caller is an active participant. */
const ACCESS = [
  'MEETING_NOT_FOUND',
  'NOT_IN_MEETING',
  'MEETING_LOOKUP_RATE_LIMITED',
  'RATE_LIMIT_UNAVAILABLE',
  'KEY_VALUE_UNAVAILABLE',
  ...CELL_CALL_REASONS,
] as const satisfies readonly Reason[];

/** The media payloads with the meeting's `room_code`. */
export const meetingMediaPayloads = mediaPayloads('room_code', roomCode);

export const MeetingRoomJoin = wsEvent({
  event: 'meeting.room.join',
  summary:
    'Follow the meeting and tell it a socket is live; after the ACK, one ' +
    'meeting.member.producer.new per live producer of the others',
  payload: RoomPayload,
  ack: Empty,
  reasons: [
    ...ACCESS,
    // The join tells the meeting a socket is live (a meeting may end meanwhile).
    ...signalCalls.MarkSocketLive.refuses,
    'TOO_MANY_ROOMS',
    'REALTIME_UNAVAILABLE',
    'MEDIA_STATE_UNAVAILABLE',
  ] satisfies Reason[],
});

export const MeetingRoomLeave = wsEvent({
  event: 'meeting.room.leave',
  summary:
    'Release the caller’s media, stop following, announce meeting.member.left (ws_leave); ' +
    'the participation stays',
  payload: RoomPayload,
  ack: Empty,
  reasons: [
    ...ACCESS,
    'MEDIA_SERVER_ERROR',
    'MEDIA_ORCHESTRATOR_ERROR',
    'MEDIA_RESOURCE_NOT_FOUND',
    'MEDIA_STATE_UNAVAILABLE',
  ] satisfies Reason[],
});

export const MeetingMemberStateChanged = wsEvent({
  event: 'meeting.member.state.changed',
  summary:
    'Change the caller’s (or, by the host, another member’s) audio / video / hand state; ' +
    'the meeting broadcasts it',
  payload: MemberStatePayload,
  ack: Empty,
  reasons: [...ACCESS, ...signalCalls.ChangeMemberState.refuses] satisfies Reason[],
});

export const meetingMediaEvents = mediaWsEvents({
  prefix: 'meeting',
  payloads: meetingMediaPayloads,
  access: ACCESS,
  notJoined: 'MEETING_NOT_JOINED' satisfies Reason,
  produce: ['SELF_UNMUTE_BLOCKED', 'SCREEN_SHARE_BUSY'],
});

/** Beyond the seed: which simulcast layer of a consumer the viewer needs, or none. */
export const MeetingConsumerPreferences = wsEvent({
  event: 'meeting.consumer.preferences',
  summary:
    'The viewer’s wish for one of its consumers: the simulcast layer (spatial_layer, or the ' +
    'tile’s max_width in pixels) and whether to forward it at all (paused)',
  payload: ConsumerPreferencesPayload,
  ack: Empty,
  reasons: [
    ...ACCESS,
    'MEDIA_RESOURCE_NOT_FOUND',
    'MEDIA_SERVER_ERROR',
    'MEDIA_ORCHESTRATOR_ERROR',
    'MEDIA_STATE_UNAVAILABLE',
  ] satisfies Reason[],
});

const reset = MEDIA_RESET_FRAMES.meeting;

export const meetingProtocol: WsProtocol = {
  events: [
    MeetingRoomJoin,
    MeetingRoomLeave,
    MeetingMemberStateChanged,
    ...Object.values(meetingMediaEvents),
    MeetingConsumerPreferences,
  ],
  frames: [
    ...Object.entries(MEETING_ROOM_FRAMES).map(([event, data]) =>
      wsFrame({ event, data, to: 'room-event', summary: 'A committed meeting event' }),
    ),
    ...Object.entries(MEETING_USER_FRAMES).map(([event, data]) =>
      wsFrame({
        event,
        data,
        to: 'user',
        summary: 'To one user: the kicked member; the waiting room’s joiner or host',
      }),
    ),
    wsFrame({
      event: PRODUCER_NEW,
      data: ProducerNewData,
      to: 'room',
      summary: 'A producer of the meeting opened or closed (also after a join’s ACK)',
    }),
    wsFrame({
      id: `${MEMBER_LEFT}--ws_leave`,
      event: MEMBER_LEFT,
      data: WsLeftData,
      to: 'room',
      summary: 'A member sent meeting.room.leave (outside the frame chain)',
    }),
    wsFrame({
      event: ACTIVE_SPEAKER,
      data: ActiveSpeakerData,
      to: 'room',
      summary:
        'Whose microphone is loudest now (the media server’s active-speaker observer; once per ' +
        'change, from the meeting’s owner)',
    }),
    wsFrame({
      event: reset.event,
      data: reset.data,
      to: 'room',
      summary: 'The meeting’s media server died: re-create every transport, producer, consumer',
    }),
  ],
};
