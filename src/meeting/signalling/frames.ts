/**
 * The meeting signalling's S→C frames that are not cell events (sent with
 * `RealtimePublisher.toRoom`).
 */
import type { MediaKind } from '../../media-cluster/media-orchestrator.js';

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
