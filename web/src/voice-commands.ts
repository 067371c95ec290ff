/**
 * The commands a voice-room page sends on its room (each with a fresh request id), shared by
 * the page and its panels: `act` sends one and shows a refusal the page's way (its error
 * line), resolving null then.
 */
import type { OperationId } from '@echochat/client';
import { api, requestId } from './api';

export type RoomCommand = Extract<
  OperationId,
  | 'confirmMicPublishing'
  | 'changeMicSeat'
  | 'micUp'
  | 'micDown'
  | 'sendGift'
  | 'roomHeartbeat'
  | 'closeRoom'
  | 'setMicSeatLock'
  | 'setRoomAdmin'
  | 'kickUser'
  | 'unbanUser'
  | 'joinRoom'
  | 'leaveRoom'
  | 'updateRoom'
  | 'applyForSeat'
  | 'cancelSeatApplication'
  | 'approveSeatApplication'
  | 'rejectSeatApplication'
  | 'inviteToSeat'
  | 'acceptSeatInvitation'
  | 'declineSeatInvitation'
  | 'setSeatMuted'
  | 'setMicMuted'
  | 'moveToSeat'
  | 'sendRoomMessage'
  | 'deleteRoomMessage'
  | 'muteChatUser'
>;

export type RoomAnswer = Record<string, unknown>;
/** One command, its refusal shown: the answer, or null when refused. */
export type Act = (operation: RoomCommand, body?: object) => Promise<RoomAnswer | null>;

/**
 * One command on a room, its body as the page's controls build it: the cast widens the
 * SDK's per-operation types to what these commands share (a room path and a body).
 */
const command = api.call.bind(api) as (
  operation: RoomCommand,
  options: { path: { room_id: string }; body: Record<string, unknown> },
) => Promise<RoomAnswer>;

/** Sends `operation` on room `roomId` (throws the refusal). */
export const roomCommand =
  (roomId: string) =>
  (operation: RoomCommand, body: object = {}) =>
    command(operation, { path: { room_id: roomId }, body: { request_id: requestId(), ...body } });
