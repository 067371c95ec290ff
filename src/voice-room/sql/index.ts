/** The voice room with its SQL hooks: gifts charged in the commit, projections written there. */
import type { CellDomain } from '../../cell/domain.js';
import { voiceRoomDomain } from '../domain/domain.js';
import type {
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomSettings,
  VoiceRoomState,
} from '../domain/types.js';
import type { SqlStoreTypes } from '../../adapters/sql/sql-store-types.js';
import { projectVoiceRoom } from './projection.js';
import { chargeGift } from './wallet.js';
import { DEFAULT_RANKINGS, type RankingSettings } from './rankings.js';

export type VoiceRoomSqlDomain = CellDomain<
  VoiceRoomState,
  VoiceRoomCommand,
  VoiceRoomEvent,
  SqlStoreTypes
>;

export function voiceRoomWithSql(
  settings?: VoiceRoomSettings,
  rankings: RankingSettings = DEFAULT_RANKINGS,
): VoiceRoomSqlDomain {
  return {
    ...voiceRoomDomain(settings),
    inTransaction: {
      appliesTo: (command) => command.type === 'SendGift',
      apply: (trx, entry, key, nowMs) => chargeGift(trx, entry, key, nowMs, rankings),
    },
    project: projectVoiceRoom,
  };
}
