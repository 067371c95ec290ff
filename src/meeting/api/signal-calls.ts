/**
 * The meeting calls the WebSocket signalling makes (no REST route): who is an active member
 * (and the host), a live socket on the meeting's channel on a node, the node's last socket
 * gone, and a member's media state. Declared like the REST calls, so they run on the
 * meeting's owner or are forwarded there once by gRPC `MeetingCall`.
 */
import { z } from 'zod';
import { refuse } from '../domain/errors.js';
import { audioHeld } from '../domain/decide-controls.js';
import { runningRecording } from '../domain/decide-recording.js';
import { activeParticipants } from '../domain/evolve.js';
import { checkMeetingAccess, mustBeInProgress } from '../domain/guards.js';
import { moveRequestId } from '../../media-cluster/media-failover.js';
import { AppError } from '../../shared/errors.js';
import { ACCESS, declare, IN_PROGRESS } from './declaration.js';
import * as r from './replies.js';
import { RequestIdField } from './requests.js';

const withRequestId = { request_id: RequestIdField.optional() };
const flag = z.boolean().optional();
const userId = z.int().min(1).transform(String);
/** The reporting node's `ROOMS_NODE_ID` (its presence lease is keyed by it). */
const nodeId = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'node_id is a ROOMS_NODE_ID');
const serverId = z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'a media server id');

const done = () => ({});

export const signalCalls = {
  /**
   * Throws 会议不存在 / 你当前未在会议中 (also for an ended meeting); else who the host is and
   * which media server holds the meeting's router.
   */
  MeetingMember: declare({
    kind: 'query',
    scope: 'room',
    refuses: ACCESS,
    body: z.strictObject({}),
    reply: r.MeetingMemberReply,
    handle: (_ctx, req, state) => {
      const denied = state ? checkMeetingAccess(state, req.caller_id) : refuse('MEETING_NOT_FOUND');
      if (denied) throw AppError.from(denied);
      return Promise.resolve({
        is_host: state!.host_id === req.caller_id,
        media_server: state!.media_server ?? null,
        audio_held: audioHeld(state!, req.caller_id),
        screen_sharer: state!.screen_share?.user_id ?? null,
      });
    },
  }),
  /**
   * For what the media server does after a commit: where the meeting's router is, whose
   * audio is held now (muted while self-unmute is blocked), which recording runs.
   */
  MeetingMediaState: declare({
    kind: 'query',
    scope: 'room',
    refuses: IN_PROGRESS,
    caller: 'system',
    body: z.strictObject({}),
    reply: r.MediaStateReply,
    handle: (_ctx, req, state) => {
      const denied = state ? mustBeInProgress(state) : refuse('MEETING_NOT_FOUND');
      if (denied) throw AppError.from(denied);
      return Promise.resolve({
        media_server: state!.media_server ?? null,
        held_user_ids: activeParticipants(state!)
          .map((p) => p.user_id)
          .filter((userId) => audioHeld(state!, userId)),
        recording_id: runningRecording(state!)?.recording_id ?? null,
      });
    },
  }),
  /** The caller's screen producer is about to be made: one share per meeting. */
  StartScreenShare: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'NOT_IN_MEETING', 'SCREEN_SHARE_BUSY'],
    body: z.strictObject({ ...withRequestId, stale_sharer_id: userId.nullable() }),
    reply: r.Done,
    handle: (ctx, req) =>
      ctx.execute(
        { ...req, room_code: req.room_code! },
        { type: 'StartScreenShare', user_id: req.caller_id, stale_sharer_id: req.stale_sharer_id },
        done,
      ),
  }),
  /** The caller's screen producer closed. */
  StopScreenShare: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS],
    body: z.strictObject({ ...withRequestId }),
    reply: r.Done,
    handle: (ctx, req) =>
      ctx.execute(
        { ...req, room_code: req.room_code! },
        { type: 'StopScreenShare', user_id: req.caller_id },
        done,
      ),
  }),
  MarkSocketLive: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'NOT_IN_MEETING'],
    body: z.strictObject({ ...withRequestId, node_id: nodeId }),
    reply: r.Done,
    handle: (ctx, req) =>
      ctx.execute(
        { ...req, room_code: req.room_code! },
        { type: 'MarkSocketLive', user_id: req.caller_id, node_id: req.node_id },
        done,
      ),
  }),
  MarkSocketsGone: declare({
    kind: 'command',
    scope: 'room',
    // The runtime answers a meeting that does not exist before any rule (MeetingKind.notFound).
    refuses: ['MEETING_NOT_FOUND'],
    body: z.strictObject({ ...withRequestId, node_id: nodeId }),
    reply: r.Done,
    handle: (ctx, req) =>
      ctx.execute(
        { ...req, room_code: req.room_code! },
        { type: 'MarkSocketsGone', user_id: req.caller_id, node_id: req.node_id },
        done,
      ),
  }),
  /**
   * The meeting's media server died: its router goes on `to_server`
   * (src/media-cluster/media-failover.ts); a meeting no longer on `from_server` stays as it is.
   * The cell's request id names this move (the moves the meeting made so far included).
   */
  MoveMediaServer: declare({
    kind: 'command',
    scope: 'room',
    // The runtime answers a meeting that does not exist before any rule (MeetingKind.notFound).
    refuses: ['MEETING_NOT_FOUND'],
    caller: 'system',
    body: z.strictObject({ ...withRequestId, from_server: serverId, to_server: serverId }),
    reply: r.MoveMediaReply,
    handle: (ctx, req, state) => {
      const move = { from: req.from_server, to: req.to_server, moves: state?.media_moves ?? 0 };
      return ctx.execute(
        {
          ...req,
          room_code: req.room_code!,
          request_id: moveRequestId(req.request_id ?? '', move),
        },
        { type: 'MoveMediaServer', from_server: req.from_server, to_server: req.to_server },
        (result) => result.reply,
      );
    },
  }),
  ChangeMemberState: declare({
    kind: 'command',
    scope: 'room',
    refuses: [
      ...IN_PROGRESS,
      'NOT_IN_MEETING',
      'HOST_ONLY_WS',
      'TARGET_NOT_ACTIVE',
      'SELF_UNMUTE_BLOCKED',
    ],
    body: z.strictObject({
      ...withRequestId,
      target_user_id: userId.optional(),
      audio_enabled: flag,
      video_enabled: flag,
      hand_raised: flag,
    }),
    reply: r.Done,
    handle: (ctx, req) =>
      ctx.execute(
        { ...req, room_code: req.room_code! },
        {
          type: 'ChangeMemberState',
          user_id: req.caller_id,
          target_user_id: req.target_user_id,
          audio_enabled: req.audio_enabled,
          video_enabled: req.video_enabled,
          hand_raised: req.hand_raised,
        },
        done,
      ),
  }),
};
