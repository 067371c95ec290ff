/**
 * What members of a voice room see live: each committed voice-room event as a frame for
 * the room (join/leave, seats, mic sessions, gifts, close) and, for a kick, a leave or a
 * stale presence, a message to that user, whose sockets then stop following the room.
 */
import type { z } from 'zod';
import type { CanFollow } from '../../edge/ws/hub.js';
import type { FrameMapper, MappedFrame } from '../../realtime/frames.js';
import type { VoiceRoomEvent } from '../domain/types.js';
import type { VOICE_USER_FRAMES } from './voice-frame-data.js';
import type { VoiceRoomApi } from './voice-api.js';
import { withJsonUserIds } from './json.js';
import { userIdJson } from '../../shared/user-id.js';

/** A targeted frame's data, of its declared type (./voice-frame-data.ts; room frames: there too). */
type UserFrameData<E extends keyof typeof VOICE_USER_FRAMES> = z.input<
  (typeof VOICE_USER_FRAMES)[E]
>;

export const ROOM_FRAMES: Readonly<Record<VoiceRoomEvent['type'], string | null>> = {
  RoomCreated: null,
  RoomActivated: null,
  // Its members hear it as `voice.media.reset`, sent once the new router exists.
  MediaServerMoved: null,
  RoomClosed: 'voice.room.closed',
  RoomUpdated: 'voice.room.updated',
  SeatApplied: 'voice.seat.applied',
  SeatApplicationEnded: 'voice.seat.application.ended',
  SeatInvited: 'voice.seat.invited',
  SeatCountSet: 'voice.seat.count.changed',
  MicMuteSet: 'voice.mic.muted',
  SeatMuteSet: 'voice.seat.muted',
  SeatInvitationEnded: 'voice.seat.invitation.ended',
  UserJoined: 'voice.member.joined',
  PresenceRefreshed: null,
  UserLeft: 'voice.member.left',
  PresenceStale: 'voice.member.left',
  UserKicked: 'voice.member.kicked',
  UserUnbanned: 'voice.member.unbanned',
  RoomAdminSet: 'voice.admin.changed',
  MicSeatLockSet: 'voice.seat.locked',
  MicTakenUp: 'voice.mic.up',
  MicSeatChanged: 'voice.mic.changed',
  MicPublishingConfirmed: 'voice.mic.publishing',
  // The seat went live at the client's confirm; the RTC anchor is not sent out (domain.ts).
  MicRtcAnchored: null,
  MicReleased: 'voice.mic.released',
  GiftSent: 'voice.gift.sent',
  RoomMessageSent: 'voice.chat.message',
  ChatMuteSet: 'voice.chat.muted',
  RoomMessageDeleted: 'voice.chat.deleted',
};

/** A join or leave of the room's crowd (../domain/crowd.ts). */
export function isCrowdEvent(event: VoiceRoomEvent): boolean {
  return 'in_crowd' in event && event.in_crowd === true;
}

export const voiceRoomFrames: FrameMapper = {
  toFrames(envelope) {
    const event = envelope.data as VoiceRoomEvent;
    const name = ROOM_FRAMES[event.type];
    if (!name) return [];
    const { type, ...fields } = event;
    const data: Record<string, unknown> = withJsonUserIds(fields);
    if (type === 'UserLeft' || type === 'PresenceStale')
      data.reason = type === 'UserLeft' ? 'leave' : 'stale';
    // Follows end with the presence: a member who leaves, goes stale or is kicked stops
    // receiving the room's frames, and nobody follows a closed room. A crowd's join or
    // leave is counted, not announced (../signalling/audience-counts.ts sends the count).
    const frames: MappedFrame[] = isCrowdEvent(event)
      ? []
      : [
          {
            to: 'room',
            event: name,
            data,
            ...(type === 'RoomClosed' ? { endsFollows: true } : {}),
          },
        ];
    if (type === 'UserKicked') {
      frames.push({
        to: 'user',
        userId: event.user_id,
        event: 'voice.kicked',
        data: {
          room_id: envelope.room_id,
          operator_user_id: userIdJson(event.operator_user_id),
        } satisfies UserFrameData<'voice.kicked'>,
        unfollowRoom: true,
      });
    }
    if (type === 'UserLeft' || type === 'PresenceStale') {
      frames.push({
        to: 'user',
        userId: event.user_id,
        event: 'voice.left',
        data: {
          room_id: envelope.room_id,
          reason: type === 'UserLeft' ? 'leave' : 'stale',
        } satisfies UserFrameData<'voice.left'>,
        unfollowRoom: true,
      });
    }
    return frames;
  },
};

/** A socket may follow a voice room while its user is present there (not banned). */
export function voiceRoomFollowers(api: VoiceRoomApi): CanFollow {
  return async (user, key) => {
    if (user.appCode !== key.appCode) return false;
    const reply = (await api
      .call('CheckRoomAccess', {
        app_code: key.appCode,
        room_id: key.roomId,
        user_id: user.userId,
        action: 'view',
      })
      .catch(() => ({ allowed: false }))) as { allowed: boolean };
    return reply.allowed;
  };
}
