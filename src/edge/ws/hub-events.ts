/**
 * The hub's own C→S events, `room.subscribe` and `room.unsubscribe` (docs/protocol.md,
 * "Following rooms"). Their refusals keep the short texts clients already see: a bad field
 * is `参数错误: <field>` (no rule), and an `app_code` that is not a string is, like any other
 * app's code, 无权访问其他应用的房间.
 */
import { z } from 'zod';
import { errors } from '../../shared/error-codes.js';
import type { AppError } from '../../shared/errors.js';
import { wsEvent, type ErrorName, type WsProtocol } from './ws-declarations.js';

/** An event id as the outbox makes them (a UUID), or any short printable id. */
const EVENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const roomId = z.string().min(1).max(128).describe("The room's id (a meeting: its room code)");
const appCode = z.string().optional().describe("The room's app: the token's, when given");

/** The first bad field, as the hub always answered it. */
function refuse(error: z.ZodError): AppError {
  const field = String(error.issues[0]?.path[0] ?? 'data');
  return field === 'app_code' ? errors.APP_MISMATCH() : errors.BAD_REQUEST(field);
}

const RoomAnswer = z.strictObject({ app_code: z.string(), room_id: z.string() });

export const RoomSubscribe = wsEvent({
  event: 'room.subscribe',
  summary:
    'Follow a room: from the ACK on, every event committed in it is pushed; with ' +
    'since_event_id / since_version the ACK replays the frames missed since then',
  payload: z.object({
    room_id: roomId,
    app_code: appCode,
    // Checked in this order; `since_event_id` wins when both are given.
    since_event_id: z
      .string()
      .regex(EVENT_ID)
      .optional()
      .describe('event_id of the last frame the client applied'),
    since_version: z
      .int()
      .min(0)
      .optional()
      .describe('the room version of the state the client has'),
  }),
  ack: RoomAnswer.extend({
    replay: z
      .array(z.unknown())
      .readonly()
      .optional()
      .describe('The room event frames after the client’s, in order, as they were sent live'),
    refetch: z
      .literal(true)
      .optional()
      .describe('The replay cannot be proved whole: fetch the room state again'),
  }),
  reasons: [
    'NOT_IN_ROOM_WS',
    'APP_MISMATCH',
    'TOO_MANY_ROOMS',
    'REALTIME_UNAVAILABLE',
  ] satisfies ErrorName[],
  refuse,
});

export const RoomUnsubscribe = wsEvent({
  event: 'room.unsubscribe',
  summary: 'Stop following a room (no-op when not followed)',
  payload: z.object({ room_id: roomId, app_code: appCode }),
  ack: RoomAnswer,
  reasons: ['APP_MISMATCH'] satisfies ErrorName[],
  refuse,
});

/** The hub's part of the protocol: its events, and no frames of its own. */
export const hubProtocol: WsProtocol = { events: [RoomSubscribe, RoomUnsubscribe], frames: [] };
