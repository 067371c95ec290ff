/**
 * Every RPC of the voice-room API, declared once: its request schema (./requests.ts, named
 * after the proto message), the command it runs or its handler, its reply and its REST
 * route. The gRPC RoomService (../../edge/grpc/room-service.ts), the REST routes
 * (../http/voice-routes.ts) and VoiceRoomApi's dispatch (./voice-api.ts) are derived from
 * this table. A command type added to the decider does not compile until it is declared
 * here (or listed as a system command); the service's methods in the proto must be the
 * declared names (commands.unit.test.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { refuse } from '../domain/errors.js';
import { checkRoomAccess, mustBeActive, mustBeOwnerOrAdmin } from '../domain/guards.js';
import type { VoiceRoomCommand } from '../domain/types.js';
import { memberPageView, roomView, seatApplicationsView } from '../domain/view.js';
import { memberPageJson, roomJson } from './json.js';
import { moveRequestId } from '../../media-cluster/media-failover.js';
import { AppError } from '../../shared/errors.js';
import { userIdJson } from '../../shared/user-id.js';
import {
  command,
  commandReply,
  commandWithDecision,
  custom,
  withDecision,
  type AnyDeclaration,
  type DeclarationOf,
} from './declaration.js';
import * as r from './replies.js';
import * as m from './requests.js';

/** Commands no client sends: the timer worker's. */
type SystemCommand = 'ExpireDeadlines';
type QueryName =
  | 'GetRoom'
  | 'ListMembers'
  | 'ListSeatApplications'
  | 'ListRoomMessages'
  | 'GetRankings'
  | 'CheckRoomAccess'
  | 'GetRoomMedia';
export type RpcName = Exclude<VoiceRoomCommand['type'], SystemCommand> | QueryName;

/** The id CreateRoom gives a room created without one: retries of one request land on one room. */
export function createdRoomIdOf(appCode: string, requestId: string): string {
  const digest = createHash('sha256').update(`${appCode}\n${requestId}`).digest('base64url');
  return `vr_${digest.slice(0, 16)}`;
}

const inRoom = (action: string) => `/rooms/:room_id/${action}`;

// What each command may be refused with (./declaration.ts `Refusable`), by the guards it
// passes first (../domain/guards.ts) and then its own rules.
const ACTIVE = ['ROOM_NOT_FOUND', 'ROOM_CLOSED', 'ROOM_NOT_ACTIVE'] as const;
const MEMBER = [...ACTIVE, 'NOT_IN_ROOM'] as const;
const MANAGER = [...ACTIVE, 'NOT_ADMIN'] as const;
/** The kick rule (`mustOutrank`): nobody removes the owner, only the owner removes an admin. */
const OUTRANK = ['NOT_OWNER'] as const;
const FREE_SEAT = ['SEAT_NOT_FOUND', 'SEAT_LOCKED', 'SEAT_OCCUPIED'] as const;

/** What SendGift's decider answers (../domain/view.ts `replyOf`); older records lack `balance`. */
const GiftDecision = z.object({ total_price: z.int().optional(), balance: z.int().optional() });

export const voiceCommands = {
  CreateRoom: custom({
    kind: 'command',
    schema: m.CreateRoomRequest,
    refuses: ['ROOM_ALREADY_EXISTS'],
    reply: r.CreateRoomReply,
    handle: (ctx, req) => {
      // Retries with one request id must land on one room: derive the id from it.
      const room_id = req.room_id ?? createdRoomIdOf(req.app_code, req.request_id ?? randomUUID());
      const { owner_user_id, title, seat_count, seat_mode } = req;
      // The room's router goes on the least loaded media server (recorded in the room).
      const media_server = ctx.placeMedia();
      return ctx.execute(
        { ...req, room_id },
        { type: 'CreateRoom', owner_user_id, title, seat_count, seat_mode, media_server },
        (result) => ({ room_id, ...commandReply(result) }),
      );
    },
    rest: {
      summary: 'Create a voice room owned by the caller',
      method: 'POST',
      path: '/rooms',
      caller: 'owner_user_id',
      body: ['title', 'seat_count', 'seat_mode'],
      defaults: { seat_count: 8 },
      status: 201,
      creates: createdRoomIdOf,
    },
  }),
  CloseRoom: command({
    schema: m.OperatorRequest,
    refuses: MANAGER,
    toCommand: (r) => ({ type: 'CloseRoom', operator_user_id: r.operator_user_id }),
    rest: {
      summary: 'Close the room (owner or admin)',
      method: 'POST',
      path: inRoom('close'),
      caller: 'operator_user_id',
    },
  }),
  UpdateRoom: command({
    schema: m.UpdateRoomRequest,
    refuses: MANAGER,
    toCommand: (r) => ({
      type: 'UpdateRoom',
      operator_user_id: r.operator_user_id,
      title: r.title,
      announcement: r.announcement,
      seat_mode: r.seat_mode,
    }),
    rest: {
      summary: "Change the room's title, announcement or seat mode (owner or admin)",
      method: 'POST',
      path: inRoom('settings'),
      caller: 'operator_user_id',
      body: ['title', 'announcement', 'seat_mode'],
    },
  }),
  JoinRoom: command({
    schema: m.UserRequest,
    refuses: [...ACTIVE, 'USER_BANNED'],
    toCommand: (r) => ({ type: 'JoinRoom', user_id: r.user_id }),
    rest: {
      summary: 'Join the room',
      method: 'POST',
      path: inRoom('join'),
      caller: 'user_id',
    },
  }),
  LeaveRoom: command({
    schema: m.UserRequest,
    refuses: MEMBER,
    toCommand: (r) => ({ type: 'LeaveRoom', user_id: r.user_id }),
    rest: {
      summary: 'Leave the room (and its mic seat)',
      method: 'POST',
      path: inRoom('leave'),
      caller: 'user_id',
    },
  }),
  RoomHeartbeat: command({
    schema: m.UserRequest,
    refuses: MEMBER,
    toCommand: (r) => ({ type: 'RoomHeartbeat', user_id: r.user_id }),
    rest: {
      summary: 'Stay present (else stale_left after ROOMS_PRESENCE_TIMEOUT_MS)',
      method: 'POST',
      path: inRoom('heartbeat'),
      caller: 'user_id',
    },
  }),
  KickUser: command({
    schema: m.ManageUserRequest,
    refuses: [...MANAGER, 'CANNOT_TARGET_SELF', 'CANNOT_KICK_OWNER', ...OUTRANK],
    toCommand: (r) => ({
      type: 'KickUser',
      user_id: r.user_id,
      operator_user_id: r.operator_user_id,
    }),
    rest: {
      summary: 'Kick and ban a member (owner or admin)',
      method: 'POST',
      path: inRoom('kick'),
      caller: 'operator_user_id',
      body: ['user_id'],
    },
  }),
  UnbanUser: command({
    schema: m.ManageUserRequest,
    refuses: [...MANAGER, 'NOT_BANNED'],
    toCommand: (r) => ({
      type: 'UnbanUser',
      user_id: r.user_id,
      operator_user_id: r.operator_user_id,
    }),
    rest: {
      summary: 'Lift a ban (owner or admin)',
      method: 'POST',
      path: inRoom('unban'),
      caller: 'operator_user_id',
      body: ['user_id'],
    },
  }),
  SetRoomAdmin: command({
    schema: m.SetRoomAdminRequest,
    refuses: [...ACTIVE, 'NOT_OWNER', 'CANNOT_TARGET_SELF'],
    toCommand: (r) => ({
      type: 'SetRoomAdmin',
      user_id: r.user_id,
      operator_user_id: r.operator_user_id,
      is_admin: r.is_admin,
    }),
    rest: {
      summary: 'Make a member an admin, or not (owner)',
      method: 'POST',
      path: inRoom('admins'),
      caller: 'operator_user_id',
      body: ['user_id', 'is_admin'],
    },
  }),
  SetMicSeatLock: command({
    schema: m.SetMicSeatLockRequest,
    refuses: [...MANAGER, 'SEAT_NOT_FOUND', 'CANNOT_TARGET_OWNER', ...OUTRANK],
    toCommand: (r) => ({
      type: 'SetMicSeatLock',
      seat_index: r.seat_index,
      locked: r.locked,
      operator_user_id: r.operator_user_id,
    }),
    rest: {
      summary: 'Lock or unlock a mic seat (owner or admin)',
      method: 'POST',
      path: inRoom('seats/lock'),
      caller: 'operator_user_id',
      body: ['seat_index', 'locked'],
    },
  }),
  MicUp: commandWithDecision({
    reply: r.MicReply,
    schema: m.SeatRequest,
    refuses: [...MEMBER, 'ALREADY_ON_SEAT', 'SEAT_APPLICATION_REQUIRED', ...FREE_SEAT],
    toCommand: (r) => ({ type: 'MicUp', user_id: r.user_id, seat_index: r.seat_index }),
    rest: {
      summary: 'Take a free mic seat (then publish and confirm)',
      method: 'POST',
      path: inRoom('mic/up'),
      caller: 'user_id',
      body: ['seat_index'],
    },
  }),
  ApplyForSeat: commandWithDecision({
    reply: r.ApplyForSeatReply,
    schema: m.ApplyForSeatRequest,
    refuses: [...MEMBER, 'SEAT_MODE_FREE', 'SEAT_NOT_FOUND', 'ALREADY_ON_SEAT', 'ALREADY_APPLIED'],
    toCommand: (r) => ({ type: 'ApplyForSeat', user_id: r.user_id, seat_index: r.seat_index }),
    rest: {
      summary: 'Apply for a mic seat, any or a given one (seat mode apply)',
      method: 'POST',
      path: inRoom('seat-applications'),
      caller: 'user_id',
      body: ['seat_index'],
    },
  }),
  CancelSeatApplication: command({
    schema: m.UserRequest,
    refuses: [...ACTIVE, 'NO_SEAT_APPLICATION'],
    toCommand: (r) => ({ type: 'CancelSeatApplication', user_id: r.user_id }),
    rest: {
      summary: "Withdraw one's seat application",
      method: 'POST',
      path: inRoom('seat-applications/cancel'),
      caller: 'user_id',
    },
  }),
  ApproveSeatApplication: commandWithDecision({
    reply: r.MicReply,
    schema: m.OfferSeatRequest,
    refuses: [...MANAGER, 'NO_SEAT_APPLICATION', 'NO_FREE_SEAT', ...FREE_SEAT],
    toCommand: (r) => ({
      type: 'ApproveSeatApplication',
      operator_user_id: r.operator_user_id,
      user_id: r.user_id,
      seat_index: r.seat_index,
    }),
    rest: {
      summary:
        'Approve a seat application: the applicant takes the seat as by MicUp (owner or admin)',
      method: 'POST',
      path: inRoom('seat-applications/approve'),
      caller: 'operator_user_id',
      body: ['user_id', 'seat_index'],
    },
  }),
  RejectSeatApplication: command({
    schema: m.ManageUserRequest,
    refuses: [...MANAGER, 'NO_SEAT_APPLICATION'],
    toCommand: (r) => ({
      type: 'RejectSeatApplication',
      operator_user_id: r.operator_user_id,
      user_id: r.user_id,
    }),
    rest: {
      summary: 'Reject a seat application (owner or admin)',
      method: 'POST',
      path: inRoom('seat-applications/reject'),
      caller: 'operator_user_id',
      body: ['user_id'],
    },
  }),
  MoveToSeat: commandWithDecision({
    reply: r.MicReply,
    schema: m.MoveToSeatRequest,
    refuses: [
      ...MANAGER,
      'CANNOT_TARGET_OWNER',
      ...OUTRANK,
      'NOT_IN_ROOM',
      'NOT_ON_SEAT',
      ...FREE_SEAT,
    ],
    toCommand: (r) => ({
      type: 'MoveToSeat',
      operator_user_id: r.operator_user_id,
      user_id: r.user_id,
      seat_index: r.seat_index,
    }),
    rest: {
      summary: 'Move a seat holder to an idle seat, keeping the mic session (owner or admin)',
      method: 'POST',
      path: inRoom('seats/move'),
      caller: 'operator_user_id',
      body: ['user_id', 'seat_index'],
    },
  }),
  SetSeatCount: command({
    schema: m.SetSeatCountRequest,
    refuses: [...MANAGER, 'SEAT_OCCUPIED'],
    toCommand: (r) => ({
      type: 'SetSeatCount',
      operator_user_id: r.operator_user_id,
      seat_count: r.seat_count,
    }),
    rest: {
      summary: 'Grow the seats, or shrink them over seats nobody holds (owner or admin)',
      method: 'POST',
      path: inRoom('seats/count'),
      caller: 'operator_user_id',
      body: ['seat_count'],
    },
  }),
  SetSeatMuted: command({
    schema: m.SetSeatMutedRequest,
    refuses: [...MANAGER, 'SEAT_NOT_FOUND', 'CANNOT_TARGET_OWNER', ...OUTRANK],
    toCommand: (r) => ({
      type: 'SetSeatMuted',
      operator_user_id: r.operator_user_id,
      seat_index: r.seat_index,
      muted: r.muted,
    }),
    rest: {
      summary: 'Mute a mic seat (禁麦) or unmute it: its holder keeps it, unheard (owner or admin)',
      method: 'POST',
      path: inRoom('seats/mute'),
      caller: 'operator_user_id',
      body: ['seat_index', 'muted'],
    },
  }),
  SetMicMuted: command({
    schema: m.SetMicMutedRequest,
    refuses: MEMBER,
    toCommand: (r) => ({ type: 'SetMicMuted', user_id: r.user_id, muted: r.muted }),
    rest: {
      summary: 'Show the room that you muted your own microphone, or not',
      method: 'POST',
      path: inRoom('mic/mute'),
      caller: 'user_id',
      body: ['muted'],
    },
  }),
  InviteToSeat: command({
    schema: m.OfferSeatRequest,
    refuses: [
      ...MANAGER,
      'NOT_IN_ROOM',
      'CANNOT_TARGET_SELF',
      'SEAT_NOT_FOUND',
      'ALREADY_ON_SEAT',
      'ALREADY_INVITED',
    ],
    toCommand: (r) => ({
      type: 'InviteToSeat',
      operator_user_id: r.operator_user_id,
      user_id: r.user_id,
      seat_index: r.seat_index,
    }),
    rest: {
      summary: 'Invite a present member to a seat, any or a given one (owner or admin)',
      method: 'POST',
      path: inRoom('seat-invitations'),
      caller: 'operator_user_id',
      body: ['user_id', 'seat_index'],
    },
  }),
  AcceptSeatInvitation: commandWithDecision({
    reply: r.MicReply,
    schema: m.UserRequest,
    refuses: [...MEMBER, 'NO_SEAT_INVITATION', 'NO_FREE_SEAT', ...FREE_SEAT],
    toCommand: (r) => ({ type: 'AcceptSeatInvitation', user_id: r.user_id }),
    rest: {
      summary: 'Accept your seat invitation: you take the seat as by MicUp',
      method: 'POST',
      path: inRoom('seat-invitations/accept'),
      caller: 'user_id',
    },
  }),
  DeclineSeatInvitation: command({
    schema: m.UserRequest,
    refuses: [...ACTIVE, 'NO_SEAT_INVITATION'],
    toCommand: (r) => ({ type: 'DeclineSeatInvitation', user_id: r.user_id }),
    rest: {
      summary: 'Decline your seat invitation',
      method: 'POST',
      path: inRoom('seat-invitations/decline'),
      caller: 'user_id',
    },
  }),
  MicDown: command({
    schema: m.MicDownRequest,
    refuses: [...MANAGER, 'CANNOT_TARGET_OWNER', ...OUTRANK, 'NOT_ON_SEAT'],
    toCommand: (r) => ({
      type: 'MicDown',
      user_id: r.user_id,
      operator_user_id: r.operator_user_id,
    }),
    rest: {
      summary: 'Leave the mic, or (owner or admin) take a member off it',
      method: 'POST',
      path: inRoom('mic/down'),
      body: ['user_id'],
      // Yourself, or (an owner or admin) the body's user_id: then the caller is the operator.
      fields: (me, b) =>
        b.user_id !== undefined && b.user_id !== me
          ? { user_id: b.user_id, operator_user_id: me }
          : { user_id: me },
    },
  }),
  ChangeMicSeat: commandWithDecision({
    reply: r.MicReply,
    schema: m.SeatRequest,
    refuses: [...MEMBER, 'NOT_ON_SEAT', ...FREE_SEAT],
    toCommand: (r) => ({ type: 'ChangeMicSeat', user_id: r.user_id, seat_index: r.seat_index }),
    rest: {
      summary: 'Move to another free mic seat',
      method: 'POST',
      path: inRoom('mic/change'),
      caller: 'user_id',
      body: ['seat_index'],
    },
  }),
  ConfirmMicPublishing: commandWithDecision({
    reply: r.MicReply,
    schema: m.ConfirmMicPublishingRequest,
    refuses: [...ACTIVE, 'NOT_ON_SEAT', 'MIC_SESSION_MISMATCH'],
    toCommand: (r) => ({
      type: 'ConfirmMicPublishing',
      user_id: r.user_id,
      mic_session_id: r.mic_session_id,
    }),
    rest: {
      summary: 'Confirm that the mic is publishing',
      method: 'POST',
      path: inRoom('mic/confirm'),
      caller: 'user_id',
      body: ['mic_session_id'],
    },
  }),
  // The RTC events come from the RTC provider's callbacks (../http/trtc-callback.ts), not REST.
  RtcAudioStarted: command({
    schema: m.RtcEventRequest,
    // Late, repeated and unknown sessions' events are dropped, never refused.
    refuses: [],
    toCommand: rtcEvent('RtcAudioStarted'),
  }),
  RtcAudioStopped: command({
    schema: m.RtcEventRequest,
    refuses: [],
    toCommand: rtcEvent('RtcAudioStopped'),
  }),
  RtcRoomExited: command({
    schema: m.RtcEventRequest,
    refuses: [],
    toCommand: rtcEvent('RtcRoomExited'),
  }),
  SendGift: custom({
    kind: 'command',
    schema: m.SendGiftRequest,
    refuses: [
      ...MEMBER,
      'GIFT_TO_SELF',
      'AMOUNT_TOO_LARGE',
      // The catalog and the wallets, read and written with the commit (../sql/wallet.ts).
      'GIFT_NOT_FOUND',
      'GIFT_PRICE_CHANGED',
      'INSUFFICIENT_BALANCE',
      'BALANCE_LIMIT',
      'AMOUNT_NOT_EXACT',
    ],
    reply: r.GiftReply,
    handle: async (ctx, req) => {
      // The price is the catalog's, never the caller's; the commit checks it again.
      const gift = await ctx.store.findGift(req.app_code, req.gift_id);
      if (!gift?.active) throw AppError.from(refuse('GIFT_NOT_FOUND', req.gift_id));
      const { sender_user_id, receiver_user_ids, gift_id, count } = req;
      return ctx.execute(
        req,
        {
          type: 'SendGift',
          sender_user_id,
          receiver_user_ids,
          gift_id,
          count,
          unit_price: gift.price,
        },
        async (result) => {
          const charged = GiftDecision.parse(result.reply);
          return {
            ...commandReply(result),
            total_price: charged.total_price ?? 0,
            // The balance right after the charge (recorded with it, so a retry answers the
            // same); gifts recorded before it was kept answer the current balance.
            balance:
              charged.balance ?? (await ctx.store.balanceOf(req.app_code, req.sender_user_id)),
          };
        },
      );
    },
    rest: {
      summary: "Send a gift to members: the catalog's price, paid from the caller's wallet",
      method: 'POST',
      path: inRoom('gifts'),
      caller: 'sender_user_id',
      body: ['receiver_user_ids', 'gift_id', 'count'],
      defaults: { count: 1 },
    },
  }),
  // The public chat (公屏): the sender's nickname is the accounts' (read here, not sent);
  // the rate limit is counted on the owner (the query routes there first), once per request.
  SendRoomMessage: custom({
    kind: 'command',
    schema: m.SendRoomMessageRequest,
    refuses: [...MEMBER, 'USER_BANNED', 'CHAT_MUTED', 'CHAT_RATE_LIMITED'],
    reply: r.SendRoomMessageReply,
    handle: (ctx, req) =>
      ctx.query(
        req,
        () => null,
        async () => {
          const { app_code: appCode, room_id: roomId, user_id: userId, request_id } = req;
          const call = { appCode, roomId, userId, requestId: request_id };
          return ctx.chat.admit(call, ctx.store, async () => {
            const user_name = await ctx.store.nicknameOf(appCode, userId);
            return ctx.execute(
              req,
              { type: 'SendRoomMessage', user_id: userId, user_name, content: req.content },
              (result) => withDecision(r.SendRoomMessageReply, result),
            );
          });
        },
      ),
    rest: {
      summary: 'Send a message to the room’s public chat (a present member)',
      method: 'POST',
      path: inRoom('messages'),
      caller: 'user_id',
      body: ['content'],
    },
  }),
  MuteChatUser: command({
    schema: m.MuteChatUserRequest,
    refuses: [...MANAGER, 'CANNOT_TARGET_SELF', 'CANNOT_TARGET_OWNER', ...OUTRANK],
    toCommand: (r) => ({
      type: 'MuteChatUser',
      operator_user_id: r.operator_user_id,
      user_id: r.user_id,
      duration_s: r.duration_s,
    }),
    rest: {
      summary: 'Mute a member in the chat for duration_s seconds; 0 lifts it (owner or admin)',
      method: 'POST',
      path: inRoom('chat-mutes'),
      caller: 'operator_user_id',
      body: ['user_id', 'duration_s'],
    },
  }),
  // The message's sender is read here (a message never changes sender) for the decider's rule.
  DeleteRoomMessage: custom({
    kind: 'command',
    schema: m.DeleteRoomMessageRequest,
    refuses: [...ACTIVE, 'MESSAGE_NOT_FOUND', 'NOT_ADMIN'],
    reply: r.CommandReply,
    handle: async (ctx, req) => {
      const message = await ctx.store.roomMessage(req.app_code, req.room_id, req.message_id);
      return ctx.execute(
        req,
        {
          type: 'DeleteRoomMessage',
          operator_user_id: req.operator_user_id,
          message_id: req.message_id,
          message,
        },
        commandReply,
      );
    },
    rest: {
      summary: 'Delete a chat message (its sender, the owner or an admin)',
      method: 'POST',
      path: inRoom('messages/delete'),
      caller: 'operator_user_id',
      body: ['message_id'],
    },
  }),
  ListRoomMessages: custom({
    kind: 'query',
    schema: m.ListRoomMessagesRequest,
    refuses: [...MEMBER, 'USER_BANNED'],
    reply: r.RoomMessagePage,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state) => checkRoomAccess(state, req.user_id, 'view'),
        async (denied) => {
          if (denied) throw AppError.from(denied);
          const page = await ctx.store.listRoomMessages(req.app_code, req.room_id, {
            beforeId: req.before_id,
            limit: req.limit,
          });
          return {
            app_code: req.app_code,
            room_id: req.room_id,
            messages: page.list.map((msg) => ({ ...msg, user_id: userIdJson(msg.user_id) })),
            has_more: page.has_more,
          };
        },
      ),
    rest: {
      summary: 'The chat history, newest first (a present member)',
      method: 'GET',
      path: inRoom('messages'),
      caller: 'user_id',
      query: {
        // 0 (the default a generated client may send) is the newest page, as over gRPC.
        before_id: {
          kind: 'integer',
          default: 0,
          min: 0,
          max: Number.MAX_SAFE_INTEGER,
          description:
            "Older than this message: the last page's oldest `message_id`; 0: the newest",
        },
        limit: { kind: 'integer', ...m.MESSAGE_PAGE, description: 'How many messages at most' },
      },
    },
  }),
  GetRankings: custom({
    kind: 'query',
    schema: m.GetRankingsRequest,
    refuses: ['ROOM_NOT_FOUND'],
    reply: r.Rankings,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state) => state.status === 'absent',
        async (absent) => {
          if (absent) throw AppError.from(refuse('ROOM_NOT_FOUND'));
          const { app_code, room_id, board, period, limit } = req;
          const top = await ctx.store.rankings(
            app_code,
            room_id,
            board,
            period,
            limit,
            ctx.nowMs(),
          );
          return {
            app_code,
            room_id,
            board,
            period,
            day: top.day,
            entries: top.entries.map((e, i) => ({
              rank: i + 1,
              user_id: userIdJson(e.user_id),
              user_name: e.user_name,
              total: e.total,
            })),
          };
        },
      ),
    rest: {
      summary: 'A gift ranking: contribution (sent) or charm (received), today or all time',
      method: 'GET',
      path: inRoom('rankings'),
      query: {
        board: { kind: 'enum', values: ['contribution', 'charm'], description: 'Which board' },
        period: { kind: 'enum', values: ['day', 'all'], description: 'Today or all time' },
        limit: { kind: 'integer', ...m.RANKING_PAGE, description: 'How many entries at most' },
      },
    },
  }),
  GetRoom: custom({
    kind: 'query',
    schema: m.GetRoomRequest,
    refuses: ['ROOM_NOT_FOUND'],
    reply: r.Room,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state, version) => (state.status === 'absent' ? null : roomView(state, version)),
        (view) => {
          if (!view) throw AppError.from(refuse('ROOM_NOT_FOUND'));
          return { app_code: req.app_code, room_id: req.room_id, ...roomJson(view) };
        },
      ),
    rest: {
      summary: 'The room: members, seats, admins, status',
      method: 'GET',
      path: '/rooms/:room_id',
    },
  }),
  // A big room's members a page at a time: GetRoom lists all of them, a page costs
  // O(log n + limit) on the owner (../domain/presence-book.ts `presentEntriesAfter`).
  ListMembers: custom({
    kind: 'query',
    schema: m.ListMembersRequest,
    refuses: ['ROOM_NOT_FOUND'],
    reply: r.MemberPage,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state) => (state.status === 'absent' ? null : memberPageView(state, req.after, req.limit)),
        (page) => {
          if (!page) throw AppError.from(refuse('ROOM_NOT_FOUND'));
          return { app_code: req.app_code, room_id: req.room_id, ...memberPageJson(page) };
        },
      ),
    rest: {
      summary: "A page of the room's present members, in user id order",
      method: 'GET',
      path: inRoom('members'),
      query: {
        after: {
          kind: 'user_id',
          description: "The page starts after this member: the last page's `next_after`",
        },
        limit: {
          kind: 'integer',
          ...m.MEMBER_PAGE,
          description: 'How many members at most',
        },
      },
    },
  }),
  ListSeatApplications: custom({
    kind: 'query',
    schema: m.ListSeatApplicationsRequest,
    refuses: MANAGER,
    reply: r.SeatApplications,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state) =>
          mustBeActive(state) ??
          mustBeOwnerOrAdmin(state, req.user_id) ??
          seatApplicationsView(state),
        (answer) => {
          if ('code' in answer) throw AppError.from(answer);
          return {
            app_code: req.app_code,
            room_id: req.room_id,
            applications: answer.applications.map((a) => ({
              ...a,
              user_id: userIdJson(a.user_id),
            })),
          };
        },
      ),
    rest: {
      summary: 'The pending seat applications, oldest first (owner or admin)',
      method: 'GET',
      path: inRoom('seat-applications'),
      caller: 'user_id',
    },
  }),
  // Not on REST: the nodes' media signalling asks where the room's router is, and moves it
  // off a dead media server (src/media-cluster/media-failover.ts).
  GetRoomMedia: custom({
    kind: 'query',
    schema: m.GetRoomRequest,
    refuses: [],
    reply: r.RoomMediaReply,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state) => state.media_server ?? '',
        (media_server) => ({ media_server }),
      ),
  }),
  // The cell's request id names this move, the moves the room made so far included
  // (src/media-cluster/media-failover.ts): read on the owner, then the move decided there.
  MoveMediaServer: custom({
    kind: 'command',
    schema: m.MoveMediaServerRequest,
    refuses: [],
    reply: r.MoveMediaReply,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state) => state.media_moves ?? 0,
        (moves) => {
          const move = { from: req.from_server, to: req.to_server, moves };
          return ctx.execute(
            { ...req, request_id: moveRequestId(req.request_id ?? '', move) },
            { type: 'MoveMediaServer', from_server: req.from_server, to_server: req.to_server },
            (result) => withDecision(r.MoveMediaReply, result),
          );
        },
      ),
  }),
  CheckRoomAccess: custom({
    kind: 'query',
    schema: m.CheckRoomAccessRequest,
    refuses: [],
    reply: r.CheckRoomAccessReply,
    handle: (ctx, req) =>
      ctx.query(
        req,
        (state) => checkRoomAccess(state, req.user_id, req.action),
        (denied) =>
          denied
            ? { allowed: false, reason: denied.code, message: denied.message }
            : { allowed: true, reason: '', message: '' },
      ),
  }),
} satisfies { readonly [M in RpcName]: DeclarationOf<M> };

function rtcEvent<T extends 'RtcAudioStarted' | 'RtcAudioStopped' | 'RtcRoomExited'>(type: T) {
  return (req: z.output<typeof m.RtcEventRequest>) => ({
    type,
    user_id: req.user_id,
    event_time_ms: req.event_time_ms,
    mic_session_id: req.mic_session_id,
  });
}

export const rpcNames = Object.keys(voiceCommands) as RpcName[];

/** The declaration of `method`, as the edges use it (each edge parses with its schema first). */
export function declarationOf(method: RpcName): AnyDeclaration {
  return voiceCommands[method];
}

/** What RPC `M` answers. */
export type ReplyOf<M extends RpcName> = z.output<(typeof voiceCommands)[M]['reply']>;

/** The reply schema of `method`, typed by the method. */
export function replySchemaOf<M extends RpcName>(method: M): z.ZodType<ReplyOf<M>> {
  const replies: { readonly [K in RpcName]: { readonly reply: z.ZodType<ReplyOf<K>> } } =
    voiceCommands;
  return replies[method].reply;
}
