/**
 * CreateMeeting: a fresh room code claimed outside the cell (retries of one request claim
 * one code), then the meeting created in the cell of that code. A refused creation releases
 * its code; a code that is another kind's room is drawn again.
 */
import type { z } from 'zod';
import { refuse } from '../domain/errors.js';
import { AppError } from '../../shared/errors.js';
import type { MeetingContext, MeetingRequest } from './declaration.js';
import { hashPassword } from './password-lock.js';
import { roomReply } from './meeting-router.js';
import type * as r from './replies.js';
import { cellRequestId, onceKey } from './request-keys.js';
import type * as b from './requests.js';

/** Draws of a room code before 会议号冲突，请重试 (the seed: 5). */
export const ROOM_CODE_TRIES = 5;
/**
 * A create the cell refused (nothing made there): its code is released. ROOM_KIND_MISMATCH
 * (the code is another kind's room, e.g. a voice room's id) draws another code.
 */
const REFUSED_CREATE = new Set<unknown>([
  'IN_OTHER_MEETING',
  'INVALID_ARGUMENT',
  'ROOM_KIND_MISMATCH',
]);
const REDRAW = new Set<unknown>(['ROOM_KIND_MISMATCH']);

export async function createMeeting(
  ctx: MeetingContext,
  req: MeetingRequest & z.output<typeof b.CreateBody>,
): Promise<z.output<typeof r.CreateMeetingReply>> {
  // Retries of one create request draw one code. A create without a request id is new
  // each time: its claim gets a key of its own, which names nothing in the cell.
  const requestKey = cellRequestId(req) ?? onceKey(req);
  for (let draws = 0; draws < ROOM_CODE_TRIES; draws++) {
    const claim = await ctx.store.claimMeetingCode(
      req.app_code,
      requestKey,
      ctx.newRoomCode(),
      ctx.clock.nowMs(),
    );
    if (claim.kind !== 'claimed') continue;
    try {
      return await createIn(ctx, req, claim);
    } catch (error) {
      const reason = (error as { code?: unknown }).code;
      // Anything else may have committed (a lost answer): the claim stands for the retry.
      if (!REFUSED_CREATE.has(reason)) throw error;
      // Refused, nothing created: the code is free again, for this request's next draw
      // or anyone's.
      await ctx.store.releaseMeetingCode(req.app_code, requestKey, claim.room_code);
      if (!REDRAW.has(reason)) throw error;
    }
  }
  throw AppError.from(refuse('ROOM_CODE_CONFLICT'));
}

/** The meeting of create request `req` in the cell of the code it claimed. */
async function createIn(
  ctx: MeetingContext,
  req: MeetingRequest & z.output<typeof b.CreateBody>,
  claim: { readonly id: number; readonly room_code: string },
): Promise<z.output<typeof r.CreateMeetingReply>> {
  const code = claim.room_code;
  // A retry of a create that committed finds its caller active in that meeting: not "other".
  const active = await ctx.store.activeMeetingOf(req.app_code, req.caller_id);
  const inOther = active !== null && active !== code;
  const hostRow = await ctx.store.participantIdOf(req.app_code, code, req.caller_id);
  const hash =
    req.password === undefined || inOther ? null : await hashPassword(ctx.passwords, req.password);
  return ctx.execute(
    { ...req, room_code: code },
    {
      type: 'CreateMeeting',
      meeting_id: claim.id,
      host_user_id: req.caller_id,
      host_participant_id: String(hostRow),
      room_code: code,
      title: req.title,
      password_hash: hash,
      max_members: req.max_members,
      ...(req.waiting_room ? { waiting_room: true } : {}),
      in_other_meeting: inOther,
      media_server: ctx.media.place(),
    },
    async (result) => {
      const { participant: _p, waiting: _w, ...rest } = await roomReply(ctx, req, result.reply);
      return rest;
    },
  );
}
