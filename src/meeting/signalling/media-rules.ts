/**
 * The meeting's media rules for the room-kind-agnostic media signalling: every active
 * participant may use media and produce audio and video (the seed's whitelist #4–#9),
 * except its microphone while the host keeps it muted (mute-all without self-unmute), and a
 * shared screen only while nobody else shares (the cell decides: ../domain/decide-screen.ts);
 * producers are announced as `meeting.member.producer.new` with their source; the router is
 * on the media server the meeting's state records.
 */
import type { CellKey } from '../../cell/lease.js';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';
import type {
  ProducerSource,
  RoomMediaRules,
  RoomMediaState,
} from '../../edge/room-media/ports.js';
import { refuse } from '../domain/errors.js';
import { PRODUCER_NEW, producerFrame } from './frames.js';
import type { MeetingMember, MeetingMembership } from './ports.js';

const SCREEN: ReadonlySet<ProducerSource> = new Set(['screen', 'screen_audio']);

export function meetingMediaRules(
  membership: MeetingMembership,
  state: Pick<RoomMediaState, 'liveProducers'>,
): RoomMediaRules {
  /**
   * The share the caller takes: another member's share whose sharer has no live screen
   * producer left (its socket dropped) is named stale; the cell judges the rest.
   */
  async function share(key: CellKey, userId: string, member: MeetingMember): Promise<void> {
    const sharer = member.screenSharer;
    let stale: string | null = null;
    if (sharer !== null && sharer !== userId && !member.isHost) {
      const live = await state.liveProducers(key);
      const sharing = live.some((p) => p.userId === sharer && p.source === 'screen');
      if (!sharing) stale = sharer;
    }
    await membership.startScreenShare(key.appCode, key.roomId, userId, stale);
  }

  return {
    kind: 'meeting',
    roomField: 'room_code',
    eventPrefix: 'meeting',
    producerNewEvent: PRODUCER_NEW,
    access: (appCode, roomCode, userId) => membership.member(appCode, roomCode, userId),
    // `access` checked the active participation; the microphone needs the host's leave,
    // a screen the meeting's one share.
    async mayProduce(appCode, roomCode, userId, _kind, source) {
      if (source === 'camera') return {};
      const member = await membership.member(appCode, roomCode, userId);
      if (source === 'microphone' && member.audioHeld) {
        throw AppError.from(refuse('SELF_UNMUTE_BLOCKED'));
      }
      if (SCREEN.has(source)) await share({ appCode, roomId: roomCode }, userId, member);
      return {};
    },
    producerFrame,
    notJoined: () => errors.MEETING_NOT_JOINED(),
  };
}
