/** The voice-room edges' {@link VoiceRoomStore} on the SQL database. */
import type { Kysely } from 'kysely';
import type { VoiceRoomStore } from '../api/voice-store.js';
import type { Database } from '../../adapters/sql/schema.js';
import { findGift, listGifts, listLobby, putGift } from './catalog.js';
import { countOpenRooms, roomExists } from './owners.js';
import { balanceOf, topUp } from './wallet.js';
import { listRoomMessages, roomMessage } from './chat.js';
import { requestDecided } from '../../adapters/sql/request-decided.js';
import { nicknamesOf, topOfRanking } from './rankings.js';

export function sqlVoiceRoomStore(
  db: Kysely<Database>,
  /** The rankings' day (an IANA time zone). */
  rankingTimeZone = 'UTC',
): VoiceRoomStore {
  return {
    balanceOf: (appCode, userId) => balanceOf(db, appCode, userId),
    topUp: (appCode, userId, amount, requestId, nowMs) =>
      topUp(db, appCode, userId, amount, requestId, nowMs),
    findGift: async (appCode, giftId) => (await findGift(db, appCode, giftId)) ?? null,
    listGifts: (appCode) => listGifts(db, appCode),
    putGift: (appCode, gift, nowMs) => putGift(db, appCode, gift, nowMs),
    listLobby: (appCode, limit, offset) => listLobby(db, appCode, limit, offset),
    countOpenRooms: (appCode, owner) => countOpenRooms(db, appCode, owner),
    roomExists: (appCode, roomId) => roomExists(db, appCode, roomId),
    nicknameOf: async (appCode, userId) =>
      (await nicknamesOf(db, appCode, [userId])).get(userId) ?? '',
    requestDecided: (appCode, roomId, requestId) => requestDecided(db, appCode, roomId, requestId),
    roomMessage: (appCode, roomId, messageId) => roomMessage(db, appCode, roomId, messageId),
    listRoomMessages: (appCode, roomId, query) => listRoomMessages(db, appCode, roomId, query),
    rankings: (appCode, roomId, board, period, limit, nowMs) =>
      topOfRanking(db, { appCode, roomId }, board, period, limit, nowMs, rankingTimeZone),
  };
}
