/**
 * The waiting room's endpoints (beyond the seed, in its conventions; docs/meetings.md,
 * "Waiting room"): the host turns it on or off, lists who waits, admits or denies one or
 * all; an admitted joiner asks for the meeting's router (its join answered none).
 */
import type { MeetingCommand } from '../domain/types.js';
import { refuse } from '../domain/errors.js';
import { waitingOf } from '../domain/evolve.js';
import { checkMeetingAccess, mustBeHost, mustBeInProgress } from '../domain/guards.js';
import { AppError } from '../../shared/errors.js';
import {
  declare,
  IN_PROGRESS,
  ACCESS,
  type MeetingContext,
  type MeetingRequest,
} from './declaration.js';
import { mediaOf, roomAfter } from './meeting-router.js';
import { idJson, roomJson, timeJson } from './render.js';
import * as r from './replies.js';
import * as b from './requests.js';
import { meetingView } from '../domain/view.js';

type Choice = MeetingRequest & { room_code?: string; user_id?: string; all?: true };

/** Admit or deny: the host's choice, answered with who it applied to and the room after. */
function decide(
  ctx: MeetingContext,
  req: Choice,
  command: Extract<MeetingCommand, { type: 'AdmitWaiting' | 'DenyWaiting' }>,
) {
  return ctx.execute({ ...req, room_code: req.room_code! }, command, async (result) => {
    const { room, user_ids } = result.reply;
    return {
      user_ids: user_ids.map((id) => idJson(id)!),
      room: roomJson(room, await ctx.meetingId(req.app_code, room.room_code)),
    };
  });
}

export const waitingCalls = {
  SetWaitingRoom: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY'],
    rest: {
      summary: 'Turn the waiting room on or off (host): joins wait for the host to admit them',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/waiting-room',
    },
    body: b.WaitingRoomBody,
    reply: r.EndMeetingReply,
    handle: (ctx, req) =>
      roomAfter(ctx, req, {
        type: 'SetWaitingRoom',
        operator_user_id: req.caller_id,
        enabled: req.enabled,
      }),
  }),
  ListWaiting: declare({
    kind: 'query',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY'],
    rest: {
      summary: 'Who waits to be admitted, in the order they came (host)',
      hostOnly: true,
      method: 'GET',
      path: '/rooms/:code/waiting',
    },
    body: b.EmptyBody.omit({ request_id: true }),
    reply: r.WaitingList,
    handle: (_ctx, req, state) => {
      const denied = state
        ? (mustBeInProgress(state) ?? mustBeHost(state, req.caller_id))
        : refuse('MEETING_NOT_FOUND');
      if (denied) throw AppError.from(denied);
      return Promise.resolve({
        list: waitingOf(state!).map((w) => ({
          user_id: idJson(w.user_id)!,
          since: timeJson(w.since_ms)!,
        })),
      });
    },
  }),
  AdmitWaiting: declare({
    kind: 'command',
    scope: 'room',
    refuses: [
      ...IN_PROGRESS,
      'HOST_ONLY',
      'NOT_IN_MEETING',
      'NOT_WAITING',
      'IN_OTHER_MEETING',
      'MEETING_FULL',
    ],
    rest: {
      summary:
        'Admit one waiting user or all (host); all stops at capacity, skipping anyone in another meeting',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/waiting/admit',
    },
    body: b.WaitingChoiceBody,
    reply: r.WaitingDecision,
    handle: async (ctx, req, state) => {
      // The single-meeting rule at admission: the edge's index, for everyone waiting.
      const code = req.room_code!;
      const waiting = state ? waitingOf(state).map((w) => w.user_id) : [];
      const active = await Promise.all(
        waiting.map(
          async (userId) =>
            [userId, await ctx.store.activeMeetingOf(req.app_code, userId)] as const,
        ),
      );
      return decide(ctx, req, {
        type: 'AdmitWaiting',
        operator_user_id: req.caller_id,
        user_id: req.user_id ?? null,
        in_other_meeting_user_ids: active
          .filter(([, meeting]) => meeting !== null && meeting !== code)
          .map(([userId]) => userId),
      });
    },
  }),
  DenyWaiting: declare({
    kind: 'command',
    scope: 'room',
    refuses: [...IN_PROGRESS, 'HOST_ONLY', 'NOT_IN_MEETING', 'NOT_WAITING'],
    rest: {
      summary: 'Turn away one waiting user or all (host); they are told',
      hostOnly: true,
      method: 'POST',
      path: '/rooms/:code/waiting/deny',
    },
    body: b.WaitingChoiceBody,
    reply: r.WaitingDecision,
    handle: (ctx, req) =>
      decide(ctx, req, {
        type: 'DenyWaiting',
        operator_user_id: req.caller_id,
        user_id: req.user_id ?? null,
      }),
  }),
  GetMeetingRouter: declare({
    kind: 'query',
    scope: 'room',
    refuses: ACCESS,
    rest: {
      summary: "The meeting's router for Device.load() (participants only): after admission",
      method: 'GET',
      path: '/rooms/:code/media',
    },
    body: b.EmptyBody.omit({ request_id: true }),
    reply: r.MeetingRouter,
    handle: (ctx, req, state) => {
      const denied = state ? checkMeetingAccess(state, req.caller_id) : refuse('MEETING_NOT_FOUND');
      if (denied) throw AppError.from(denied);
      return mediaOf(ctx, req.app_code, meetingView(state!), state!.media_moves ?? 0);
    },
  }),
};
