/**
 * Every meeting endpoint of meeting-api.md, declared once. The REST routes (../http/meeting-routes.ts),
 * MeetingApi (./meeting-api.ts) and the gRPC `MeetingCall` that forwards to the owner are
 * derived from this table. Create and join answer the meeting's router (`router_id`,
 * `rtp_capabilities`), null on a node without media.
 */
import type { z } from 'zod';
import { refuse } from '../domain/errors.js';
import { isActive } from '../domain/evolve.js';
import { checkMeetingAccess } from '../domain/guards.js';
import type { MeetingState } from '../domain/types.js';
import { meetingDetail } from '../domain/view.js';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';
import { createMeeting } from './create-meeting.js';
import { ACCESS, declare, IN_PROGRESS, type MeetingRequest } from './declaration.js';
import { inviteMembers, redeemInvite } from './invites.js';
import { roomAfter, roomReply } from './meeting-router.js';
import { judgePassword } from './password-lock.js';
import { chatJson, idJson, participantJson, roomJson, rowJson } from './render.js';
import * as r from './replies.js';
import { cellRequestId, onceKey } from './request-keys.js';
import * as b from './requests.js';
import { signalCalls } from './signal-calls.js';
import { recordingCalls } from './recording-calls.js';
import { waitingCalls } from './waiting-calls.js';

export { cellRequestId } from './request-keys.js';

function mustAccess(state: MeetingState | null, userId: string): MeetingState {
  const denied = state ? checkMeetingAccess(state, userId) : refuse('MEETING_NOT_FOUND');
  if (denied) throw AppError.from(denied);
  return state!;
}

function inRoom(req: MeetingRequest): MeetingRequest & { room_code: string } {
  return req as MeetingRequest & { room_code: string };
}

const restCalls = {
  CreateMeeting: declare({
    kind: 'command',
    scope: 'none',
    refuses: [
      'IN_OTHER_MEETING',
      'ROOM_CODE_CONFLICT',
      'CREATE_RATE_LIMITED',
      'TOO_MANY_OPEN_ROOMS',
    ],
    rest: {
      summary: 'Create an instant meeting hosted by the caller',
      method: 'POST',
      path: '/rooms',
      status: 201,
      limit: 'create',
    },
    body: b.CreateBody,
    reply: r.CreateMeetingReply,
    handle: createMeeting,
  }),
  ListMyMeetings: declare({
    kind: 'query',
    scope: 'none',
    refuses: [],
    rest: {
      summary: 'The meetings the caller hosted or joined, newest first',
      method: 'GET',
      path: '/rooms/mine',
    },
    body: b.MineQuery,
    reply: r.MeetingPage,
    handle: async (ctx, req) => {
      const page = await ctx.store.listMine(req.app_code, req.caller_id, {
        ...(req.status === undefined ? {} : { status: req.status }),
        ...(req.before_id === undefined ? {} : { beforeId: req.before_id }),
        limit: Math.min(req.limit ?? b.MINE_LIMIT.fallback, b.MINE_LIMIT.max),
      });
      return { list: page.list.map(rowJson), has_more: page.has_more };
    },
  }),
  GetMeeting: declare({
    kind: 'query',
    scope: 'room',
    refuses: ACCESS,
    rest: {
      summary: 'The meeting and its active participants (participants only)',
      method: 'GET',
      path: '/rooms/:code',
    },
    body: b.EmptyBody.omit({ request_id: true }),
    reply: r.MeetingDetail,
    handle: async (ctx, req, state) => {
      const s = mustAccess(state, req.caller_id);
      const detail = meetingDetail(s);
      const id = await ctx.meetingId(req.app_code, s.room_code);
      return {
        room: roomJson(detail.room, id),
        participants: detail.participants.map((p) => participantJson(p, id)),
        online_count: detail.online_count,
      };
    },
  }),
  JoinMeeting: declare({
    kind: 'command',
    scope: 'room',
    refuses: [
      ...IN_PROGRESS,
      'IN_OTHER_MEETING',
      'ALREADY_IN_MEETING',
      'MEETING_LOCKED',
      'PASSWORD_LOCKED',
      'PASSWORD_REQUIRED',
      'PASSWORD_WRONG',
      'MEETING_FULL',
    ],
    rest: {
      summary: 'Join the meeting (with its password when it has one)',
      method: 'POST',
      path: '/rooms/:code/join',
    },
    body: b.JoinBody,
    reply: r.JoinMeetingReply,
    handle: async (ctx, req, state) => {
      const code = inRoom(req).room_code;
      // The seed's order: 房间存在 → 未结束 → 单点参会 → 密码锁定 → 密码校验 → 容量. The
      // cell answers the first two and capacity; the edge judges the middle three, skipping
      // the password when an earlier step refuses (a refused join never counts an attempt).
      const active = await ctx.store.activeMeetingOf(req.app_code, req.caller_id);
      const inOther = active !== null && active !== code;
      const skip = !state || state.status !== 1 || inOther || isActive(state, req.caller_id);
      const password = skip
        ? 'not_required'
        : await judgePassword(ctx.passwords, state, {
            appCode: req.app_code,
            roomCode: code,
            userId: req.caller_id,
            password: req.password,
          });
      const row = await ctx.store.participantIdOf(req.app_code, code, req.caller_id);
      return ctx.execute(
        inRoom(req),
        {
          type: 'JoinMeeting',
          user_id: req.caller_id,
          participant_id: String(row),
          in_other_meeting: inOther,
          password,
        },
        (result) => roomReply(ctx, req, result.reply, state?.media_moves ?? 0),
      );
    },
  }),
  LeaveMeeting: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'NOT_IN_MEETING'],
    rest: {
      summary: 'Leave the meeting',
      method: 'POST',
      path: '/rooms/:code/leave',
    },
    body: b.EmptyBody,
    reply: r.LeaveMeetingReply,
    handle: (ctx, req) =>
      ctx.execute(inRoom(req), { type: 'LeaveMeeting', user_id: req.caller_id }, (result) => ({
        duration: result.reply.duration ?? 0,
      })),
  }),
  EndMeeting: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY'],
    rest: {
      summary: 'End the meeting for everyone (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/end',
    },
    body: b.EmptyBody,
    reply: r.EndMeetingReply,
    handle: (ctx, req) =>
      roomAfter(ctx, req, { type: 'EndMeeting', operator_user_id: req.caller_id }),
  }),
  // Beyond the seed: the host's lock and mute-all (docs/meetings.md, "Host controls").
  LockMeeting: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY'],
    rest: {
      summary: 'Lock the meeting (no new joins) or unlock it (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/lock',
    },
    body: b.LockBody,
    reply: r.EndMeetingReply,
    handle: (ctx, req) =>
      roomAfter(ctx, req, {
        type: 'LockMeeting',
        operator_user_id: req.caller_id,
        locked: req.locked,
      }),
  }),
  MuteAll: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY'],
    rest: {
      summary: 'Mute every other member; with allow_unmute false they stay muted (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/mute-all',
    },
    body: b.MuteAllBody,
    reply: r.EndMeetingReply,
    handle: (ctx, req) =>
      roomAfter(ctx, req, {
        type: 'MuteAll',
        operator_user_id: req.caller_id,
        allow_unmute: req.allow_unmute ?? true,
      }),
  }),
  AllowSelfUnmute: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY'],
    rest: {
      summary: 'Let members unmute themselves again, or not (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/self-unmute',
    },
    body: b.SelfUnmuteBody,
    reply: r.EndMeetingReply,
    handle: (ctx, req) =>
      roomAfter(ctx, req, {
        type: 'AllowSelfUnmute',
        operator_user_id: req.caller_id,
        allowed: req.allowed,
      }),
  }),
  TransferHost: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY', 'CANNOT_TRANSFER_TO_SELF', 'TARGET_NOT_ACTIVE'],
    rest: {
      summary: 'Hand the host role to an active participant (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/transfer-host',
    },
    body: b.TransferBody,
    reply: r.TransferHostReply,
    handle: (ctx, req) =>
      ctx.execute(
        inRoom(req),
        {
          type: 'TransferHost',
          operator_user_id: req.caller_id,
          target_user_id: req.target_user_id,
        },
        (result) => {
          const changed = result.reply;
          return {
            old_host_id: idJson(changed.old_host_id ?? null),
            new_host_id: idJson(changed.new_host_id ?? null),
          };
        },
      ),
  }),
  KickMember: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY', 'CANNOT_KICK_SELF', 'TARGET_NOT_ACTIVE'],
    rest: {
      summary: 'Remove an active participant (host)',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/kick',
    },
    body: b.KickBody,
    reply: r.KickMemberReply,
    handle: (ctx, req) =>
      ctx.execute(
        inRoom(req),
        { type: 'KickMember', operator_user_id: req.caller_id, target_user_id: req.user_id },
        (result) => {
          const left = result.reply;
          return { user_id: idJson(left.user_id ?? null), duration: left.duration ?? 0 };
        },
      ),
  }),
  InviteMembers: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...ACCESS, 'INVITE_RATE_LIMITED', 'INVITEE_NOT_FOUND'],
    rest: {
      summary: 'Invite users: each gets a meeting_invite notification',
      method: 'POST',
      path: '/rooms/:code/invite',
    },
    body: b.InviteBody,
    // Outside the cell: tokens and notifications are not meeting state. The request id makes
    // it idempotent all the same (see ./invites.ts); without one it is new each time.
    reply: r.InviteMembersReply,
    handle: (ctx, req, state) =>
      inviteMembers(
        { ...ctx.invites, clock: ctx.clock },
        {
          ...inRoom(req),
          request_key: cellRequestId(req) ?? onceKey(req),
          invitee_ids: req.invitee_ids,
        },
        state,
      ),
  }),
  RedeemInvite: declare({
    kind: 'query',
    scope: 'none',
    refuses: ['INVITE_EXPIRED'],
    rest: {
      summary: "An invite token's meeting: room code, inviter, has_password",
      method: 'POST',
      path: '/invite-tokens/:token/redeem',
    },
    body: b.EmptyBody.omit({ request_id: true }),
    params: b.TokenParam,
    reply: r.RedeemInviteReply,
    handle: (ctx, req) => redeemInvite(ctx.invites.kv, req as typeof req & { token: string }),
  }),
  SendChat: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'NOT_IN_MEETING', 'CHAT_RATE_LIMITED'],
    rest: {
      summary: 'Send a chat message to the meeting',
      method: 'POST',
      path: '/rooms/:code/chats',
      status: 201,
      limit: 'chat',
    },
    body: b.ChatBody,
    reply: r.SendChatReply,
    handle: (ctx, req) =>
      ctx.execute(
        inRoom(req),
        { type: 'SendChat', user_id: req.caller_id, content: req.content },
        async (result) => {
          const { message } = result.reply;
          if (!message) throw errors.DECIDE_FAILED('a chat line committed without its message');
          const id = await ctx.meetingId(req.app_code, inRoom(req).room_code);
          return {
            message: chatJson(
              {
                message_id: message.id,
                user_id: message.user_id,
                content: message.content,
                created_at_ms: message.created_at_ms,
              },
              id,
            ),
          };
        },
      ),
  }),
  ListChats: declare({
    kind: 'query',
    scope: 'room',
    refuses: ACCESS,
    rest: {
      summary: "The meeting's chat history, newest first",
      method: 'GET',
      path: '/rooms/:code/chats',
    },
    body: b.ChatsQuery,
    reply: r.ChatPage,
    handle: async (ctx, req, state) => {
      const s = mustAccess(state, req.caller_id);
      const page = await ctx.store.listChats(req.app_code, s.room_code, {
        ...(req.before_id === undefined ? {} : { beforeId: req.before_id }),
        limit: Math.min(req.limit ?? b.CHATS_LIMIT.fallback, b.CHATS_LIMIT.max),
      });
      const id = await ctx.meetingId(req.app_code, s.room_code);
      return { list: page.list.map((c) => chatJson(c, id)), has_more: page.has_more };
    },
  }),
};

/** Every meeting call: the REST endpoints and the WebSocket signalling's own. */
export const meetingCalls = { ...restCalls, ...waitingCalls, ...recordingCalls, ...signalCalls };

export type MeetingMethod = keyof typeof meetingCalls;

/** What meeting call `M` answers. */
export type MeetingReplyOf<M extends MeetingMethod> = z.output<(typeof meetingCalls)[M]['reply']>;

/** The reply schema of `method`, typed by the method. */
export function meetingReplySchemaOf<M extends MeetingMethod>(
  method: M,
): z.ZodType<MeetingReplyOf<M>> {
  const replies: {
    readonly [K in MeetingMethod]: { readonly reply: z.ZodType<MeetingReplyOf<K>> };
  } = meetingCalls;
  return replies[method].reply;
}
export const meetingMethods = Object.keys(meetingCalls) as MeetingMethod[];
