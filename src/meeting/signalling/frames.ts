/**
 * The meeting signalling's S→C frames that are not cell events (sent with
 * `RealtimePublisher.toRoom`), with their declared data (the AsyncAPI document shows it).
 */
import { z } from 'zod';
import { defaultSource, type ProducerSource } from '../../edge/room-media/ports.js';
import { producerNewData } from '../../edge/room-media/ws-events.js';
import type { MediaKind } from '../../media-cluster/media-orchestrator.js';
import { userIdJson } from '../api/render.js';
import { JsonUserId } from '../../shared/user-id.js';

export const PRODUCER_NEW = 'meeting.member.producer.new';
export const MEMBER_LEFT = 'meeting.member.left';
/** `meeting.member.left {reason}` after `meeting.room.leave` (REST uses leave / kicked). */
export const WS_LEAVE_REASON = 'ws_leave';

/** `meeting.member.producer.new {room_code, user_id, producer_id, kind, closed, source}`. */
export const ProducerNewData = producerNewData('room_code', JsonUserId).extend({
  source: z
    .enum(['microphone', 'camera', 'screen', 'screen_audio'])
    .optional()
    .describe(
      'Beyond the seed: what the track carries (a shared screen: screen, screen_audio); ' +
        'always on an opened producer, possibly absent on a closed one',
    ),
});
/** `meeting.member.left {room_code, user_id, reason: ws_leave}`, outside the frame chain. */
export const WsLeftData = z.strictObject({
  room_code: z.string(),
  user_id: JsonUserId,
  reason: z.literal(WS_LEAVE_REASON),
});

/** The seed's int64 user id: a meeting's user ids are decimal account ids (../api/requests.ts). */
export { userIdJson };

/** `meeting.member.producer.new {room_code, user_id, producer_id, kind, closed}`. */
export function producerFrame(
  roomCode: string,
  userId: string,
  producerId: string,
  kind: MediaKind,
  closed: boolean,
  source?: ProducerSource,
): z.input<typeof ProducerNewData> {
  // A closed producer is dropped by its id: its source is told when it is still known.
  const told = source ?? (closed ? undefined : defaultSource(kind));
  return {
    room_code: roomCode,
    user_id: userIdJson(userId),
    producer_id: producerId,
    kind,
    closed,
    ...(told ? { source: told } : {}),
  };
}
