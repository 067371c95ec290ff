/**
 * The meeting API's requests: what REST takes from a body or query string (strict: an
 * unknown field, or a field of the wrong JSON type, is refused; nothing is coerced), and
 * the full request an RPC runs with (the body plus who calls, in which app, on which
 * meeting, under which request id). A forwarded call is parsed again on the owner.
 */
import { z } from 'zod';
import { ROOM_CODE_PATTERN } from '../domain/decide-membership.js';
import { FAILOVER_CALLER } from '../../media-cluster/media-failover.js';
import { UserIdText } from '../../shared/user-id.js';

/** Only a JSON integer: `"1"`, `1.5`, `true`, `[1]` and `null` are refused, never coerced. */
const int = z.int();
const userId = int.min(1).transform(String);
/** `min`-`max` characters (code points, as JSON Schema's minLength and maxLength count). */
const chars = (min: number, max: number, what: string) =>
  z
    .string()
    .refine((s) => {
      const n = [...s].length;
      return n >= min && n <= max;
    }, `${what} must be ${min}-${max} characters`)
    .meta({ minLength: min, maxLength: max });

/** A caller-chosen request id; the edge scopes it to the caller before the cell sees it. */
export const RequestIdField = z
  .string()
  .regex(/^[\x21-\x7e]{1,100}$/, 'request_id must be 1-100 printable ASCII characters');

const withRequestId = { request_id: RequestIdField.optional() };

export const CreateBody = z.strictObject({
  ...withRequestId,
  title: chars(1, 200, 'title'),
  password: chars(4, 20, 'password').optional(),
  // The seed: 2~8, larger values truncated to 8 (the decider truncates to its cap).
  max_members: int
    .min(2, 'max_members must be at least 2')
    .optional()
    .meta({ description: 'At least 2; above 8 it is cut to 8 (default 8)' }),
  waiting_room: z
    .boolean()
    .optional()
    .describe('true: joins wait for the host to admit them (default false)'),
});
export const JoinBody = z.strictObject({
  ...withRequestId,
  password: z.string().max(200, 'password is too long').optional(),
});
export const EmptyBody = z.strictObject({ ...withRequestId });
export const TransferBody = z.strictObject({ ...withRequestId, target_user_id: userId });
export const KickBody = z.strictObject({ ...withRequestId, user_id: userId });
export const LockBody = z.strictObject({ ...withRequestId, locked: z.boolean() });
export const MuteAllBody = z.strictObject({
  ...withRequestId,
  allow_unmute: z.boolean().optional().describe('false: members stay muted until allowed'),
});
export const WaitingRoomBody = z.strictObject({ ...withRequestId, enabled: z.boolean() });
/** One waiting user (`user_id`) or every one (`all: true`): exactly one of them. */
export const WaitingChoiceBody = z
  .strictObject({
    ...withRequestId,
    user_id: userId.optional().describe('The waiting user; or send all: true'),
    all: z.literal(true).optional().describe('Everyone waiting, in the order they came'),
  })
  .refine((b) => (b.user_id === undefined) !== (b.all === undefined), {
    message: 'name either user_id or all: true',
  });
export const SelfUnmuteBody = z.strictObject({ ...withRequestId, allowed: z.boolean() });
/** The seed: 1~50 invitees, de-duplicated (by the endpoint: a repeat counts once). */
export const InviteBody = z.strictObject({
  ...withRequestId,
  invitee_ids: z
    .array(userId)
    .min(1, 'invitee_ids must name 1-50 users')
    .max(50, 'invitee_ids must name 1-50 users'),
});
/** The token is judged by the endpoint: any malformed one is 邀请链接已失效, not 400 参数错误. */
export const TokenParam = { token: z.string() };
export const ChatBody = z.strictObject({ ...withRequestId, content: chars(1, 500, 'content') });
/** Page sizes: the default, and the most one page holds (a larger `limit` is cut to it). */
export const MINE_LIMIT = { fallback: 20, max: 50 };
export const CHATS_LIMIT = { fallback: 30, max: 100 };
const pageLimit = (l: { fallback: number; max: number }) =>
  int
    .min(1)
    .optional()
    .meta({ description: `Default ${l.fallback}; above ${l.max} it is cut to ${l.max}` });

/** Query strings arrive as text: REST turns decimal digits into integers before this. */
export const MineQuery = z.strictObject({
  status: z.union([z.literal(0), z.literal(1), z.literal(2)]).optional(),
  before_id: int.min(1).optional(),
  limit: pageLimit(MINE_LIMIT),
});
export const ChatsQuery = z.strictObject({
  before_id: int.min(1).optional(),
  limit: pageLimit(CHATS_LIMIT),
});

/** Who calls: the token's app and user (REST), or the forwarding node's copy of them. */
export const Caller = {
  app_code: z.string().regex(/^[a-z0-9_-]{1,64}$/),
  // An account id in decimal: every user id a meeting answers is a JSON number.
  caller_id: UserIdText,
};
/** The node itself: a media failover moving the meeting, or its hold on muted audio. */
export const SystemCaller = {
  app_code: Caller.app_code,
  caller_id: z.literal(FAILOVER_CALLER),
};
export const InRoom = { room_code: z.string().regex(ROOM_CODE_PATTERN, '会议不存在') };
