/**
 * The voice room's part of `/ws`, declared: its C→S media events (./signalling.ts registers
 * exactly these; the hub checks their payloads with these schemas) and every S→C frame a
 * voice room sends: its committed events (../api/voice-frame-data.ts), the targeted ones, and
 * the media signalling's. The AsyncAPI document (src/edge/ws/asyncapi.ts) is made from them.
 */
import { z } from 'zod';
import { MEDIA_RESET_FRAMES } from '../../edge/room-media/media-reset.js';
import { mediaPayloads } from '../../edge/room-media/schemas.js';
import { mediaWsEvents, producerNewData } from '../../edge/room-media/ws-events.js';
import {
  CELL_CALL_REASONS,
  wsEvent,
  wsFrame,
  type ErrorName,
  type WsFrameDeclaration,
  type WsProtocol,
} from '../../edge/ws/ws-declarations.js';
import type { VoiceRoomReason } from '../domain/errors.js';
import { voiceRoomId } from '../api/requests.js';
import { JsonUserId } from '../../shared/user-id.js';
import { VOICE_EVENT_DATA, VOICE_USER_FRAMES } from '../api/voice-frame-data.js';
import { ROOM_FRAMES } from '../api/voice-frames.js';
import { VOICE_SPEAKERS } from './media-bridge.js';
import { VOICE_AUDIENCE } from './audience-counts.js';
import { VOICE_RANKING_CHANGED } from './ranking-frames.js';
import { VOICE_PRODUCER_NEW } from './media-rules.js';

type Reason = ErrorName | VoiceRoomReason;

/** Every media event asks the room (on its owner) whether the caller is present. */
const ACCESS = [
  'ROOM_NOT_FOUND',
  'ROOM_CLOSED',
  'ROOM_NOT_ACTIVE',
  'USER_BANNED',
  'NOT_IN_ROOM',
  ...CELL_CALL_REASONS,
] as const satisfies readonly Reason[];

/** `voice.producer.new {room_id, user_id, producer_id, kind, closed}`. */
export const VoiceProducerNewData = producerNewData('room_id', JsonUserId);
/** `voice.speakers`: who is heard now, loudest first (`[]` on silence). */
export const SpeakersData = z.strictObject({
  room_id: z.string(),
  speakers: z
    .array(
      z.strictObject({
        user_id: JsonUserId,
        seat_index: z.int(),
        volume: z.number().describe('dBov'),
      }),
    )
    .readonly(),
});

/** `voice.audience`: the room's present members, counted (./audience-counts.ts). */
export const AudienceData = z.strictObject({
  room_id: z.string(),
  online_count: z.int().nonnegative(),
});

const RankingEntryData = z.strictObject({
  rank: z.int(),
  user_id: JsonUserId,
  user_name: z.string(),
  total: z.int(),
});
const BoardData = z.strictObject({
  day: z.array(RankingEntryData).describe('Today (the rankings’ time zone)'),
  all: z.array(RankingEntryData).describe('All time'),
});
export const RankingChangedData = z.strictObject({
  room_id: z.string(),
  day: z.string().describe('The day counted: YYYY-MM-DD'),
  contribution: BoardData.describe('Gift value sent, the top 10'),
  charm: BoardData.describe('Gift value received, the top 10'),
});

export const VoiceMediaJoin = wsEvent({
  event: 'voice.media.join',
  summary:
    'After room.subscribe: the room’s router (for Device.load) and the live producers of ' +
    'the others',
  payload: z.object({ room_id: voiceRoomId }),
  ack: z.strictObject({
    router_id: z.string(),
    rtp_capabilities: z.record(z.string(), z.unknown()),
    producers: z
      .array(
        z.strictObject({
          user_id: JsonUserId,
          producer_id: z.string(),
          kind: z.enum(['audio', 'video']),
        }),
      )
      .readonly(),
  }),
  reasons: [
    ...ACCESS,
    'VOICE_MEDIA_NOT_JOINED',
    'MEDIA_SERVER_ERROR',
    'MEDIA_ORCHESTRATOR_ERROR',
    'MEDIA_RESOURCE_NOT_FOUND',
    'MEDIA_STATE_UNAVAILABLE',
  ] satisfies Reason[],
});

export const voiceMediaEvents = mediaWsEvents({
  prefix: 'voice',
  payloads: mediaPayloads('room_id', voiceRoomId),
  access: ACCESS,
  notJoined: 'VOICE_MEDIA_NOT_JOINED' satisfies Reason,
  produce: ['VOICE_AUDIO_ONLY', 'NOT_ON_SEAT'] satisfies Reason[],
});

/** One declaration per room frame name (`voice.member.left` serves two event types). */
function roomFrames(): WsFrameDeclaration[] {
  const byName = new Map<string, WsFrameDeclaration>();
  for (const [type, event] of Object.entries(ROOM_FRAMES)) {
    if (event === null || byName.has(event)) continue;
    const data = VOICE_EVENT_DATA[type as keyof typeof VOICE_EVENT_DATA] as z.ZodType | undefined;
    if (!data) throw new Error(`voice frame ${event} (${type}) has no declared data`);
    byName.set(event, wsFrame({ event, data, to: 'room-event', summary: `${type} committed` }));
  }
  return [...byName.values()];
}

const reset = MEDIA_RESET_FRAMES.voice_room;

export const voiceProtocol: WsProtocol = {
  events: [VoiceMediaJoin, ...Object.values(voiceMediaEvents)],
  frames: [
    ...roomFrames(),
    ...Object.entries(VOICE_USER_FRAMES).map(([event, data]) =>
      wsFrame({ event, data, to: 'user', summary: 'To that user, who stops following the room' }),
    ),
    wsFrame({
      event: VOICE_PRODUCER_NEW,
      data: VoiceProducerNewData,
      to: 'room',
      summary: 'A producer of the room opened or closed',
    }),
    wsFrame({
      event: VOICE_SPEAKERS,
      data: SpeakersData,
      to: 'room',
      summary: 'Who is heard now (about once a second, from the room’s owner)',
    }),
    wsFrame({
      event: VOICE_RANKING_CHANGED,
      data: RankingChangedData,
      to: 'room',
      summary:
        'The top of the gift rankings after gifts (at most once a second, from the room’s ' +
        'owner; GET …/rankings is the record)',
    }),
    wsFrame({
      event: VOICE_AUDIENCE,
      data: AudienceData,
      to: 'room',
      summary:
        'How many members are present, when plain members join or leave past the announced ' +
        'audience size (their own frames are not sent then); at most once a second',
    }),
    wsFrame({
      event: reset.event,
      data: reset.data,
      to: 'room',
      summary: 'The room’s media server died: re-create every transport, producer, consumer',
    }),
  ],
};
