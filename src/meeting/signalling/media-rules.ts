/**
 * The meeting's media rules for the room-kind-agnostic media signalling: every active
 * participant may use media and produce audio and video (the seed's whitelist #4–#9),
 * except audio while the host keeps them muted (mute-all without self-unmute); producers
 * are announced as `meeting.member.producer.new`; the router is on the media server the
 * meeting's state records.
 */
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';
import type { RoomMediaRules } from '../../edge/room-media/ports.js';
import { refuse } from '../domain/errors.js';
import { PRODUCER_NEW, producerFrame } from './frames.js';
import type { MeetingMembership } from './ports.js';

export function meetingMediaRules(membership: MeetingMembership): RoomMediaRules {
  return {
    kind: 'meeting',
    roomField: 'room_code',
    eventPrefix: 'meeting',
    producerNewEvent: PRODUCER_NEW,
    access: (appCode, roomCode, userId) => membership.member(appCode, roomCode, userId),
    // `access` checked the active participation; audio also needs the host's leave.
    async mayProduce(appCode, roomCode, userId, kind) {
      if (kind !== 'audio') return {};
      const { audioHeld } = await membership.member(appCode, roomCode, userId);
      if (audioHeld) throw AppError.from(refuse('SELF_UNMUTE_BLOCKED'));
      return {};
    },
    producerFrame,
    notJoined: () => errors.MEETING_NOT_JOINED(),
  };
}
