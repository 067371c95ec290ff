/**
 * What the media server saw in a voice room, as the seed's RTC commands
 * (room-cell-state-machines.md: `audio_started`, `audio_stopped`, `room_exited`):
 *
 * - `producer_rtp_started` of a seat holder's audio producer → RtcAudioStarted for the
 *   producer's `mic_session_id` (pending_publish → publishing, no client confirm needed);
 * - `producer_closed` of it → RtcAudioStopped for that session (a pause is not: only the
 *   server pauses a seat's producer, for a seat mute (禁麦), which keeps the seat; mapped to
 *   audio_stopped, a mute and an unmute in quick succession let the stop arrive after the
 *   unmute and free the seat);
 * - the close, ICE loss (no consent for 30 s) or DTLS failure of the user's send
 *   transport → RtcRoomExited.
 *
 * Producer events name their mic session (it travels in the producer's app data), so the
 * room applies them to that session only: a late event of an old session never touches a
 * new one. Their times are the media server's (`at_ms`), compared only with earlier media
 * events of the same session, never with this server's clock. Each event's request id is
 * derived from the media resource and the event type, so every node that relays the same
 * event (each follows the shared media server) makes one decided command, answered from
 * the room's log for the others.
 */
import type { MediaEvent } from '../../media-server/events.js';
import { parseMediaRoom } from '../../media-cluster/media-servers.js';
import type { RpcName } from './commands.js';

/** The app data a voice seat's producer carries (set by the voice signalling). */
export type VoiceProducerAppData = {
  readonly room_kind: 'voice_room';
  readonly user_id: string;
  readonly mic_session_id: string;
};

export interface VoiceRtcCall {
  readonly method: Extract<RpcName, 'RtcAudioStarted' | 'RtcAudioStopped' | 'RtcRoomExited'>;
  readonly request: {
    readonly app_code: string;
    readonly room_id: string;
    readonly request_id: string;
    readonly user_id: string;
    readonly event_time_ms: number;
    readonly mic_session_id?: string;
  };
}

/** The voice room's RTC command for a media event of `serverId`; null for any other event. */
export function rtcCallOf(event: MediaEvent, serverId: string): VoiceRtcCall | null {
  if (!('room_code' in event)) return null;
  const room = parseMediaRoom(event.room_code);
  if (room?.kind !== 'voice_room') return null;
  const base = { app_code: room.key.appCode, room_id: room.key.roomId };
  switch (event.type) {
    case 'producer_rtp_started':
    case 'producer_closed': {
      const seat = seatProducerOf(event);
      if (!seat || event.kind !== 'audio') return null;
      return {
        method: event.type === 'producer_rtp_started' ? 'RtcAudioStarted' : 'RtcAudioStopped',
        request: {
          ...base,
          request_id: `media:${serverId}:${event.producer_id}:${event.type}`,
          user_id: seat.user_id,
          mic_session_id: seat.mic_session_id,
          event_time_ms: event.at_ms,
        },
      };
    }
    case 'transport_closed':
    case 'ice_disconnected':
    case 'dtls_failed': {
      // Only the send transport carries the seat's audio; a closed receiver is no exit.
      if (event.direction !== 'send' || !event.peer_id) return null;
      return {
        method: 'RtcRoomExited',
        request: {
          ...base,
          request_id: `media:${serverId}:${event.transport_id}:exited`,
          user_id: event.peer_id,
          event_time_ms: event.at_ms,
        },
      };
    }
    default:
      return null;
  }
}

function seatProducerOf(event: { readonly app_data?: Readonly<Record<string, string>> }) {
  const data = event.app_data;
  if (data?.room_kind !== 'voice_room' || !data.user_id || !data.mic_session_id) return null;
  return { user_id: data.user_id, mic_session_id: data.mic_session_id };
}
