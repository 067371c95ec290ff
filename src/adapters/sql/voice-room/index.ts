/** The voice room with its SQL hooks: gifts charged in the commit, projections written there. */
import { voiceRoomDomain, type VoiceRoomDomain } from '../../../domain/voice-room/domain.js';
import type { VoiceRoomSettings } from '../../../domain/voice-room/types.js';
import { projectVoiceRoom } from './projection.js';
import { chargeGift } from './wallet.js';

export function voiceRoomWithSql(settings?: VoiceRoomSettings): VoiceRoomDomain {
  return {
    ...voiceRoomDomain(settings),
    inTransaction: { appliesTo: (command) => command.type === 'SendGift', apply: chargeGift },
    project: projectVoiceRoom,
  };
}
