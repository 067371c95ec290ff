/**
 * The voice room's media rules: every present member
 * may use media (consume every seat's audio); only the current holder of a seat in
 * `pending_publish` / `publishing` that is not muted may produce, audio only, and its producer carries the
 * seat's `mic_session_id`, so every later media event names the session it belongs to.
 * Both checks read the room's cell (on its owner, forwarded once when elsewhere). The room's
 * router is on the media server its cell records; a room created before servers were
 * recorded uses the node's own server, as it always did.
 */
import { refuse, type VoiceRoomReason } from '../domain/errors.js';
import type { MediaKind } from '../../media-cluster/media-orchestrator.js';
import { AppError } from '../../shared/errors.js';
import { errors } from '../../shared/error-codes.js';
import { userIdJson, userIdText } from '../../shared/user-id.js';
import type { RoomMediaRules } from '../../edge/room-media/ports.js';
import type { VoiceRoomApi } from '../api/voice-api.js';
import type { VoiceProducerAppData } from '../api/media-events.js';
import type { z } from 'zod';
import type { VoiceProducerNewData } from './ws-protocol.js';

export const VOICE_PRODUCER_NEW = 'voice.producer.new';

/** Seat states whose holder is meant to be heard. */
const SPEAKING_STATES = new Set(['pending_publish', 'publishing']);

export interface SeatView {
  readonly seat_index: number;
  readonly state: string;
  readonly user_id: number | null;
  readonly mic_session_id: string | null;
  /** 禁麦: the holder keeps the seat, unheard (its producer paused, no new one). */
  readonly muted: boolean;
}

export interface VoiceRoomMediaView {
  readonly status: string;
  readonly seats: readonly SeatView[];
}

/** The room's status and seats, from its cell. */
export async function voiceRoomOf(
  api: VoiceRoomApi,
  appCode: string,
  roomId: string,
): Promise<VoiceRoomMediaView> {
  return api.call('GetRoom', { app_code: appCode, room_id: roomId });
}

/**
 * The media server holding the room's router: the one its cell records, else (a room
 * created before they were recorded) `fallback`, the node's own.
 */
export async function mediaServerOfRoom(
  api: VoiceRoomApi,
  key: { appCode: string; roomId: string },
  fallback: string | null,
): Promise<string | null> {
  const reply = await api.call('GetRoomMedia', {
    app_code: key.appCode,
    room_id: key.roomId,
  });
  return reply.media_server || fallback;
}

/** The seat whose session may be heard now: its holder's app data; null if none. */
export function speakingSeatOf(room: VoiceRoomMediaView, userId: string): SeatView | null {
  if (room.status !== 'active') return null;
  // The room answers user ids as JSON numbers; sockets and producers name them in decimal.
  const seat = room.seats.find((s) => s.user_id !== null && userIdText(s.user_id) === userId);
  return seat?.mic_session_id && SPEAKING_STATES.has(seat.state) ? seat : null;
}

export function voiceMediaRules(api: VoiceRoomApi, fallbackServer: string | null): RoomMediaRules {
  return {
    kind: 'voice_room',
    roomField: 'room_id',
    eventPrefix: 'voice',
    producerNewEvent: VOICE_PRODUCER_NEW,
    async access(appCode, roomId, userId) {
      const [reply, mediaServer] = await Promise.all([
        api.call('CheckRoomAccess', {
          app_code: appCode,
          room_id: roomId,
          user_id: userId,
          action: 'view',
        }) as Promise<{ allowed: boolean; reason: string; message: string }>,
        mediaServerOfRoom(api, { appCode, roomId }, fallbackServer),
      ]);
      if (!reply.allowed) throw AppError.from(refuse(reply.reason as VoiceRoomReason));
      return { mediaServer };
    },
    async mayProduce(appCode, roomId, userId, kind: MediaKind, source) {
      // A seat's microphone only: no video, no shared screen.
      if (kind !== 'audio' || source !== 'microphone') throw errors.VOICE_AUDIO_ONLY();
      const seat = speakingSeatOf(await voiceRoomOf(api, appCode, roomId), userId);
      if (!seat) throw AppError.from(refuse('NOT_ON_SEAT'));
      if (seat.muted) throw AppError.from(refuse('SEAT_MUTED'));
      const data: VoiceProducerAppData = {
        room_kind: 'voice_room',
        user_id: userId,
        mic_session_id: seat.mic_session_id!,
      };
      return data;
    },
    producerFrame: (
      roomId,
      userId,
      producerId,
      kind,
      closed,
    ): z.input<typeof VoiceProducerNewData> => ({
      room_id: roomId,
      user_id: userIdJson(userId),
      producer_id: producerId,
      kind,
      closed,
    }),
    notJoined: () => errors.VOICE_MEDIA_NOT_JOINED(),
  };
}
