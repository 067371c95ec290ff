/**
 * What create and join answer besides the meeting: its router on the media server its state
 * records, for mediasoup-client's `Device.load()` (made once per meeting, then known), moved
 * off a server that died in the meantime.
 */
import type { MeetingCommand } from '../domain/types.js';
import type { MeetingReplies, MeetingView } from '../domain/view.js';
import {
  FAILOVER_CALLER,
  moveOffLostServer,
  moveRequestId,
} from '../../media-cluster/media-failover.js';
import { isMediaServerError } from '../../media-cluster/media-orchestrator.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import type { MeetingContext, MeetingRequest } from './declaration.js';
import { participantJson, roomJson } from './render.js';

/**
 * The meeting's router for `Device.load()`: created once per meeting on the media server
 * its state records (idempotent, cached), so a join reuses it (S5). A meeting created
 * without media answers null. `moves`: the moves the meeting's state recorded (a move off a
 * lost server is named by it, ../../media-cluster/media-failover.ts).
 */
export async function mediaOf(
  ctx: MeetingContext,
  appCode: string,
  room: MeetingView,
  moves: number,
) {
  const from = room.media_server;
  if (from === null) return { router_id: null, rtp_capabilities: null };
  const mediaRoom = mediaRoomOf({ appCode, roomId: room.room_code });
  // The seed's ResolveRouterInfo: the router this node already knows, kept true by the
  // server's events (src/media-cluster/router-cache.ts); a call to the server only when unknown.
  const known = ctx.media.of(from).resolveRouterInfo(mediaRoom);
  if (known.ok) return { router_id: known.routerId, rtp_capabilities: known.rtpCapabilities };
  let router;
  try {
    router = await ctx.media.of(from).createRouter(mediaRoom);
  } catch (error) {
    // A server the directory lost, that the failover did not move this meeting off (the
    // router was made after its last beat): move it now, and answer the new router.
    const now = isMediaServerError(error)
      ? await moveOffLostServer(ctx.media, from, async (to, requestId) => {
          const moved = await ctx.execute(
            {
              app_code: appCode,
              caller_id: FAILOVER_CALLER,
              room_code: room.room_code,
              request_id: moveRequestId(requestId, { from, to, moves }),
            },
            { type: 'MoveMediaServer', from_server: from, to_server: to },
            (result) => result.reply,
          );
          return moved.media_server;
        }).catch(() => null)
      : null;
    if (now === null || now === from) throw error;
    router = await ctx.media.of(now).createRouter(mediaRoom);
  }
  return { router_id: router.routerId, rtp_capabilities: router.rtpCapabilities };
}

export async function roomReply(
  ctx: MeetingContext,
  req: MeetingRequest,
  reply: MeetingReplies['JoinMeeting'],
  moves = 0,
) {
  const { room, participant } = reply;
  const waiting = reply.waiting === true;
  const id = await ctx.meetingId(req.app_code, room.room_code);
  return {
    room: roomJson(room, id),
    ...(participant ? { participant: participantJson(participant, id) } : {}),
    // Someone waiting for the host gets no router yet (GET …/media once admitted).
    ...(waiting
      ? { router_id: null, rtp_capabilities: null }
      : await mediaOf(ctx, req.app_code, room, moves)),
    waiting,
  };
}

/** The host's commands that answer the room after them (its `settings` show the controls). */
type RoomAnswering =
  | 'EndMeeting'
  | 'LockMeeting'
  | 'MuteAll'
  | 'AllowSelfUnmute'
  | 'SetWaitingRoom'
  | 'StartRecording'
  | 'StopRecording';

export function roomAfter<K extends RoomAnswering>(
  ctx: MeetingContext,
  req: MeetingRequest,
  command: Extract<MeetingCommand, { readonly type: K }>,
) {
  return ctx.execute({ ...req, room_code: req.room_code! }, command, async (result) => {
    const { room } = result.reply;
    return { room: roomJson(room, await ctx.meetingId(req.app_code, room.room_code)) };
  });
}
