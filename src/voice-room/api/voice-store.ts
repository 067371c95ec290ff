/**
 * Port of what the voice-room edges read and write outside the cells: balances and top-ups,
 * the gift catalog, the lobby list, and what the creation quota counts. Declared here, by
 * its users; the SQL adapter (src/voice-room/sql/store.ts) implements it.
 */
export interface Gift {
  readonly gift_id: string;
  readonly name: string;
  readonly price: number;
  readonly active: boolean;
}

export interface LobbyEntry {
  readonly room_id: string;
  readonly title: string;
  readonly owner_user_id: string;
  readonly online_count: number;
  readonly mic_count: number;
  readonly created_at_ms: number;
}

export interface TopUpResult {
  readonly balance: number;
  readonly duplicate: boolean;
}

/** A public chat message as the history keeps it. */
export interface RoomMessageRow {
  readonly message_id: number;
  readonly user_id: string;
  readonly user_name: string;
  readonly content: string;
  readonly at_ms: number;
}

export type RankingBoard = 'contribution' | 'charm';
export type RankingPeriod = 'day' | 'all';

export interface RankingEntry {
  readonly user_id: string;
  readonly user_name: string;
  readonly total: number;
}

export interface VoiceRoomStore {
  balanceOf(appCode: string, userId: string): Promise<number>;
  /** Admin top-up; the request id makes retries idempotent. */
  topUp(
    appCode: string,
    userId: string,
    amount: number,
    requestId: string,
    nowMs: number,
  ): Promise<TopUpResult>;
  findGift(appCode: string, giftId: string): Promise<Gift | null>;
  listGifts(appCode: string): Promise<Gift[]>;
  putGift(appCode: string, gift: Gift, nowMs: number): Promise<Gift>;
  /** Active rooms, busiest first. */
  listLobby(
    appCode: string,
    limit: number,
    offset: number,
  ): Promise<{ list: LobbyEntry[]; has_more: boolean }>;
  /** Rooms of an owner that are not closed. */
  countOpenRooms(appCode: string, ownerUserId: string): Promise<number>;
  /** Whether the room exists in any status (a creation retried after it committed). */
  roomExists(appCode: string, roomId: string): Promise<boolean>;
  /** The account's nickname ('' when there is no such account). */
  nicknameOf(appCode: string, userId: string): Promise<string>;
  /** Whether the room already decided this request id (its retry is not counted again). */
  requestDecided(appCode: string, roomId: string, requestId: string): Promise<boolean>;
  /** Who sent a message and whether it was deleted; null: none (or gone with retention). */
  roomMessage(
    appCode: string,
    roomId: string,
    messageId: number,
  ): Promise<{ readonly user_id: string; readonly deleted: boolean } | null>;
  /** The room's chat history, newest first, ids below `beforeId`, deleted ones left out. */
  listRoomMessages(
    appCode: string,
    roomId: string,
    query: { readonly beforeId?: number | undefined; readonly limit: number },
  ): Promise<{ list: RoomMessageRow[]; has_more: boolean }>;
  /** A ranking's top `limit`, largest first, and the day it counts (`''` for all time). */
  rankings(
    appCode: string,
    roomId: string,
    board: RankingBoard,
    period: RankingPeriod,
    limit: number,
    nowMs: number,
  ): Promise<{ day: string; entries: RankingEntry[] }>;
}
