/**
 * The voice room as a room kind (`voice_room`): the pure decider plus what the runtime
 * asks of a room kind. SQL hooks (wallet, projections) are added at the adapter
 * edge, see src/voice-room/sql/.
 */
import type { Reaction, RoomKind } from '../../domain/decider.js';
import { decideVoiceRoom, nextVoiceRoomDeadline } from './decide.js';
import { evolveVoiceRoom, initialVoiceRoom } from './evolve.js';
import { voiceRoomFromSnapshot } from './snapshot.js';
import type {
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from './types.js';
import { replyOf } from './view.js';

/**
 * Kept in the command log, not sent out (no webhook, no frame): heartbeats refresh presence
 * many times a minute, and an RTC anchor changes no state a consumer follows.
 */
const LOG_ONLY: ReadonlySet<VoiceRoomEvent['type']> = new Set([
  'PresenceRefreshed',
  'MicRtcAnchored',
]);

export type VoiceRoomDomain = RoomKind<VoiceRoomState, VoiceRoomCommand, VoiceRoomEvent>;

export const defaultVoiceRoomSettings: VoiceRoomSettings = {
  presenceTimeoutMs: 60_000,
  publishTimeoutMs: 15_000,
  maxSeats: 20,
};

export function voiceRoomDomain(
  settings: VoiceRoomSettings = defaultVoiceRoomSettings,
): VoiceRoomDomain {
  return {
    kind: 'voice_room',
    initialState: initialVoiceRoom,
    decide: (state, command, ctx) => decideVoiceRoom(state, command, ctx, settings),
    evolve: evolveVoiceRoom,
    fromSnapshot: voiceRoomFromSnapshot,
    nextDeadline: (state) => nextVoiceRoomDeadline(state, settings),
    alarmCommand: (state, nowMs) => {
      const due = nextVoiceRoomDeadline(state, settings);
      return due !== null && due <= nowMs ? { type: 'ExpireDeadlines' } : null;
    },
    // Only CreateRoom may bring a room row into existence.
    creates: (command) => command.type === 'CreateRoom',
    reply: replyOf,
    toOutbox: (event) => (LOG_ONLY.has(event.type) ? null : { type: event.type, data: event }),
    reactionsTo,
  };
}

/** What the room's media server must be told once an event committed. */
export function reactionsTo(event: VoiceRoomEvent): readonly Reaction[] {
  switch (event.type) {
    // A voice ended: producers no seat allows any more are closed; a seat muted or
    // unmuted: its producer is paused or resumed.
    case 'MicReleased':
    case 'RoomClosed':
    case 'SeatMuteSet':
      return [{ type: 'voice_room.producers.reconcile', data: {} }];
    // A presence ended: the user's transports and consumers in the room go too.
    case 'UserLeft':
    case 'PresenceStale':
    case 'UserKicked':
      return [{ type: 'voice_room.member_media.release', data: { user_id: event.user_id } }];
    case 'MediaServerMoved':
      return [
        {
          type: 'voice_room.media.reset',
          data: { to_server: event.to_server, user_ids: event.user_ids },
        },
      ];
    default:
      return [];
  }
}
