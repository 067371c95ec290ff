/**
 * The signalling's S→C frames that are not cell events (sent with
 * `RealtimePublisher.toRoom`), and the mapping of media server failures to the seed's ACK
 * texts.
 */
import type { CellKey } from '../../cell/lease.js';
import {
  isMediaResourceNotFound,
  isMediaServerError,
  type MediaKind,
} from '../../meeting/media-orchestrator.js';
import { AppError } from '../../shared/errors.js';
import { errors } from '../../shared/error-codes.js';

/** Port: a frame to every socket following a room, outside its frame chain. */
export interface RoomBroadcaster {
  toRoom(key: CellKey, event: string, data: Record<string, unknown>): void;
}

export const PRODUCER_NEW = 'meeting.member.producer.new';
export const MEMBER_LEFT = 'meeting.member.left';
/** `meeting.member.left {reason}` after `meeting.room.leave` (REST uses leave / kicked). */
export const WS_LEAVE_REASON = 'ws_leave';

/** The seed's int64 user id: the JSON number of a decimal id (ids are decimal strings). */
export function userIdJson(userId: string): number | string {
  return /^[1-9][0-9]{0,15}$/.test(userId) && Number.isSafeInteger(Number(userId))
    ? Number(userId)
    : userId;
}

/** `meeting.member.producer.new {room_code, user_id, producer_id, kind, closed}`. */
export function producerFrame(
  roomCode: string,
  userId: string,
  producerId: string,
  kind: MediaKind,
  closed: boolean,
): Record<string, unknown> {
  return {
    room_code: roomCode,
    user_id: userIdJson(userId),
    producer_id: producerId,
    kind,
    closed,
  };
}

/**
 * Runs one orchestrator call; its failures become the seed's ACK texts: 会议资源不存在 and
 * 会议媒体服务暂不可用 as they are, anything else `mediaOrchestrator error: <detail>`.
 */
export async function mediaCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asMediaError(error);
  }
}

export function asMediaError(error: unknown): AppError {
  if (isMediaResourceNotFound(error) || isMediaServerError(error)) return error as AppError;
  const detail = error instanceof AppError ? error.message : 'unexpected failure';
  return errors.MEDIA_ORCHESTRATOR_ERROR.withCause(error, detail);
}
