/** The voice room with its SQL hooks: gifts charged in the commit, projections written there. */
import type { CellDomain } from '../../../cell/domain.js';
import { voiceRoomDomain } from '../../../domain/voice-room/domain.js';
import type {
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from '../../../domain/voice-room/types.js';
import type { SqlStoreTypes } from '../sql-store-types.js';
import { projectVoiceRoom } from './projection.js';
import { chargeGift } from './wallet.js';

export type VoiceRoomSqlDomain = CellDomain<
  VoiceRoomState,
  VoiceRoomCommand,
  VoiceRoomEvent,
  SqlStoreTypes
>;

export function voiceRoomWithSql(settings?: VoiceRoomSettings): VoiceRoomSqlDomain {
  return {
    ...voiceRoomDomain(settings),
    inTransaction: { appliesTo: (command) => command.type === 'SendGift', apply: chargeGift },
    project: projectVoiceRoom,
  };
}
