/**
 * Meeting invites (meeting-api.md §9, §10): an active participant invites up to 50 users;
 * each invitee not already in the meeting gets a 32-hex token in the shared KeyValue store
 * (`meeting:invite:{app}:{token}`, TTL 600 s, the seed's value) and a `meeting_invite`
 * notification carrying it, all notifications in one transaction. The token never appears
 * in the inviter's answer. Redeeming a token answers the meeting it names and keeps the key
 * 60 s more at most (a page refresh may redeem again), then it expires.
 *
 * Idempotency: an invite's outcome (answer or refusal) is recorded in the KeyValue store
 * under the caller-scoped request id, with the tokens' TTL; a retry within it gets the first
 * outcome and sends nothing. The request is claimed first (set-if-absent), so two copies
 * racing send once: the second answers `BUSY` (retry) while the first is in flight.
 *
 * The notifications are the durable half of the outcome: they are written under the
 * request's key (`meeting_invite:{room}:{caller}:{request id}`, unique per app and invitee in
 * the database), all in one transaction. A claim whose node died before recording expires
 * after {@link CLAIM_MS}; the retry that claims the request again first looks for its
 * notifications, and when they are there (the first run committed, then died, or the record
 * was lost) answers from them: `pushed` = their number, `skipped` = the rest, nothing
 * written, nothing pushed, whatever the meeting's state is now. A copy that paused past its
 * claim checks, just before its commit, that the claim is still its own; when another copy
 * has taken the request over it sends nothing and answers that copy's outcome. Even a commit
 * racing that check writes nothing twice: the database lets one set of rows in per key.
 *
 * Limits: every invitee must be a user of the app (else nobody is invited), and the invitees
 * that get a token are counted against the inviter's and the meeting's allowances
 * (./limits.ts) only when the request is new, so a retry is never counted twice; an
 * allowance taken by a run that sent nothing is given back.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DomainError } from '../../domain/decider.js';
import { refuse } from '../domain/errors.js';
import { isActive } from '../domain/evolve.js';
import { checkMeetingAccess } from '../domain/guards.js';
import type { MeetingState } from '../domain/types.js';
import type { Clock } from '../../shared/clock.js';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';
import type { KeyValue } from '../../shared/key-value.js';
import type { MeetingLimits } from './limits.js';
import { idJson } from './render.js';

/** The seed's `MeetingInviteTokenTTL`: 600 s. */
export const INVITE_TTL_MS = 600_000;
/** How long a redeemed token stays redeemable (the seed: 60 s of grace). */
export const REDEEM_GRACE_MS = 60_000;
/** How long an invite in flight holds its request id before another copy may run it. */
export const CLAIM_MS = 30_000;
export const INVITE_TOKEN_PATTERN = /^[0-9a-f]{32}$/;
export const MEETING_INVITE_TYPE = 'meeting_invite';

/** A notification the centre wrote: to whom. */
interface SentNotification {
  readonly userId: string;
}

/**
 * Port: the notification centre's per-recipient batch (one transaction for all), written at
 * most once per request key.
 */
export interface InviteNotifier {
  /**
   * Writes and pushes the batch under `requestKey`, unless notifications were written under
   * it before: then nothing is written or pushed, and `fresh` is false with those.
   */
  pushEachOnce(
    appCode: string,
    requestKey: string,
    items: readonly {
      readonly recipient: string;
      readonly notification: {
        readonly type: string;
        readonly title: string;
        readonly content: string;
        readonly extra: Readonly<Record<string, unknown>>;
      };
    }[],
  ): Promise<{ readonly fresh: boolean; readonly notifications: readonly SentNotification[] }>;
  /** The notifications written under `requestKey` (none: empty). */
  sentUnder(appCode: string, requestKey: string): Promise<readonly SentNotification[]>;
}

/** Port: who a user is, as the invite card shows them (accounts' user repository). */
export interface InviteUsers {
  /** Null when the app has no such user. */
  profileOf(appCode: string, userId: string): Promise<{ nickname: string; avatar: string } | null>;
  /** Those of `userIds` that are not users of the app (none: empty). */
  missing(appCode: string, userIds: readonly string[]): Promise<readonly string[]>;
}

export interface MeetingInviteDeps {
  readonly kv: KeyValue;
  readonly notifier: InviteNotifier;
  readonly users: InviteUsers;
  /** Invitees per inviter and invite tokens per meeting (./limits.ts). */
  readonly limits: MeetingLimits;
}

/** The KeyValue key of a token, scoped by app (another app's token is unknown here). */
export function inviteKey(appCode: string, token: string): string {
  return `meeting:invite:${appCode}:${token}`;
}

function requestKey(appCode: string, roomCode: string, scopedRequestId: string): string {
  return `meeting:invite-req:${appCode}:${roomCode}:${scopedRequestId}`;
}

/** The notification centre's key of one invite request (the centre scopes it by app). */
function notificationKey(roomCode: string, scopedRequestId: string): string {
  return `${MEETING_INVITE_TYPE}:${roomCode}:${scopedRequestId}`;
}

/** A claim's value is `pending:{uuid}`: a paused copy tells its own claim from a retry's. */
const CLAIM_PREFIX = 'pending';

/** What the store keeps per token: the seed's value, exactly. */
interface TokenValue {
  room_code: string;
  inviter_id: number | null;
  invitee_id: number | string | null;
  has_password: boolean;
}

type Outcome =
  | { readonly invitees: string; readonly answer: { pushed: number; skipped: number } }
  | { readonly invitees: string; readonly refused: DomainError };

/** Another copy of the request took it over while this one was paused: answer its outcome. */
class TakenOver extends Error {}

/** One run of an invite request: its keys and its claim. */
interface Run {
  readonly kv: KeyValue;
  readonly key: string;
  readonly claim: string;
  readonly fingerprint: string;
  readonly sentKey: string;
}

export async function inviteMembers(
  deps: MeetingInviteDeps & { readonly clock: Clock },
  req: {
    readonly app_code: string;
    readonly caller_id: string;
    readonly room_code: string;
    /** Caller-scoped. */
    readonly request_key: string;
    readonly invitee_ids: readonly string[];
  },
  state: MeetingState | null,
): Promise<{ pushed: number; skipped: number }> {
  const { kv } = deps;
  const invitees = [...new Set(req.invitee_ids)];
  const run: Run = {
    kv,
    key: requestKey(req.app_code, req.room_code, req.request_key),
    claim: `${CLAIM_PREFIX}:${randomUUID()}`,
    // The same request id with other invitees is another operation, not a retry.
    fingerprint: [...invitees].sort().join(','),
    sentKey: notificationKey(req.room_code, req.request_key),
  };
  if (!(await kv.setIfAbsent(run.key, run.claim, CLAIM_MS))) {
    return replay(kv, run.key, run.fingerprint);
  }
  let outcome: Outcome;
  try {
    outcome = await decide(deps, req, state, invitees, run);
    // A refusal, or nobody to invite, is only decided if no other copy took over meanwhile.
    await checkClaim(run);
  } catch (error) {
    if (error instanceof TakenOver) return replay(kv, run.key, run.fingerprint);
    // Nothing recorded (a store failed, bad input, or a commit whose answer was lost): free
    // the request id for a retry, which finds any committed notifications, unless another
    // copy holds it by now.
    await releaseClaim(run).catch(() => undefined);
    throw error;
  }
  await record(kv, run.key, outcome);
  return answerOf(outcome);
}

async function decide(
  deps: MeetingInviteDeps & { readonly clock: Clock },
  req: { readonly app_code: string; readonly caller_id: string; readonly room_code: string },
  state: MeetingState | null,
  invitees: readonly string[],
  run: Run,
): Promise<Outcome> {
  // Notifications committed under this request are its decided outcome, though the copy
  // that wrote them died before recording it: never decide again on today's state.
  const earlier = await deps.notifier.sentUnder(req.app_code, run.sentKey);
  if (earlier.length > 0) return earlierOutcome(earlier, invitees, run.fingerprint);
  const denied = state ? checkMeetingAccess(state, req.caller_id) : refuse('MEETING_NOT_FOUND');
  if (denied) return { invitees: run.fingerprint, refused: denied };
  // All or nothing, and not recorded: a retry naming only users is decided afresh.
  const unknown = await deps.users.missing(req.app_code, invitees);
  if (unknown.length > 0) throw errors.INVITEE_NOT_FOUND(unknown.join(','));
  return { invitees: run.fingerprint, answer: await send(deps, req, state!, invitees, run) };
}

/** The outcome the notifications of an earlier run of the request tell. */
function earlierOutcome(
  earlier: readonly SentNotification[],
  invitees: readonly string[],
  fingerprint: string,
): Outcome {
  const asked = new Set(invitees);
  // Someone invited then but not named now: the same id with other invitees.
  if (!earlier.every((n) => asked.has(n.userId))) throw errors.REQUEST_ID_REUSED();
  const answer = { pushed: earlier.length, skipped: invitees.length - earlier.length };
  return { invitees: fingerprint, answer };
}

/**
 * Just before the commit: is the claim still this run's? A copy paused past {@link CLAIM_MS}
 * may find a retry's claim or outcome there (TakenOver), or nothing (it claims again).
 */
async function checkClaim(run: Run): Promise<void> {
  const current = await run.kv.get(run.key);
  if (current === run.claim) return;
  if (current === null && (await run.kv.setIfAbsent(run.key, run.claim, CLAIM_MS))) return;
  throw new TakenOver();
}

async function releaseClaim(run: Run): Promise<void> {
  if ((await run.kv.get(run.key)) === run.claim) await run.kv.del(run.key);
}

function answerOf(outcome: Outcome): { pushed: number; skipped: number } {
  if ('refused' in outcome) throw AppError.from(outcome.refused);
  return outcome.answer;
}

async function send(
  deps: MeetingInviteDeps & { readonly clock: Clock },
  req: { readonly app_code: string; readonly caller_id: string; readonly room_code: string },
  state: MeetingState,
  invitees: readonly string[],
  run: Run,
): Promise<{ pushed: number; skipped: number }> {
  const pending = invitees.filter((id) => !isActive(state, id));
  const skipped = invitees.length - pending.length;
  if (pending.length === 0) return { pushed: 0, skipped };
  // Only a request that has not sent anything yet gets here: a retry is never counted twice.
  const refund = await deps.limits.reserveInvites(
    req.app_code,
    req.caller_id,
    req.room_code,
    pending.length,
  );
  try {
    const earlier = await sendTokens(deps, req, state, pending, run);
    if (earlier === null) return { pushed: pending.length, skipped };
    // Another copy's commit came first: its notifications are the outcome, its the count.
    await refund();
    return answerOf(earlierOutcome(earlier, invitees, run.fingerprint));
  } catch (error) {
    await refund().catch(() => undefined);
    throw error;
  }
}

/**
 * Writes the tokens and notifications of `pending`: null. When another copy's commit came
 * first, nothing of this run stands, and its notifications are returned.
 */
async function sendTokens(
  deps: MeetingInviteDeps & { readonly clock: Clock },
  req: { readonly app_code: string; readonly caller_id: string; readonly room_code: string },
  state: MeetingState,
  pending: readonly string[],
  run: Run,
): Promise<readonly SentNotification[] | null> {
  const inviter = (await deps.users.profileOf(req.app_code, req.caller_id)) ?? {
    nickname: '',
    avatar: '',
  };
  const expiresAtMs = deps.clock.nowMs() + INVITE_TTL_MS;
  const items = [];
  const tokens: string[] = [];
  for (const invitee of pending) {
    const token = randomBytes(16).toString('hex');
    tokens.push(token);
    const value: TokenValue = {
      room_code: state.room_code,
      inviter_id: idJson(req.caller_id),
      invitee_id: idJson(invitee),
      has_password: state.has_password,
    };
    await deps.kv.set(inviteKey(req.app_code, token), JSON.stringify(value), INVITE_TTL_MS);
    items.push({
      recipient: invitee,
      notification: {
        type: MEETING_INVITE_TYPE,
        title: '会议邀请',
        content: `${inviter.nickname || '有人'}邀请你加入会议「${state.title}」`,
        extra: {
          room_code: state.room_code,
          room_title: state.title,
          has_password: state.has_password,
          invite_token: token,
          inviter_id: idJson(req.caller_id),
          inviter_name: inviter.nickname,
          inviter_avatar: inviter.avatar,
          // Unix seconds, no later than the key's expiry.
          expired_at: Math.floor(expiresAtMs / 1000),
        },
      },
    });
  }
  // Tokens with no notification are harmless (nobody has them); never the other way round.
  const unsent = () =>
    Promise.all(tokens.map((t) => deps.kv.del(inviteKey(req.app_code, t)).catch(() => undefined)));
  try {
    await checkClaim(run);
  } catch (error) {
    await unsent();
    throw error;
  }
  const result = await deps.notifier.pushEachOnce(req.app_code, run.sentKey, items);
  if (!result.fresh) {
    await unsent();
    return result.notifications;
  }
  return null;
}

async function record(kv: KeyValue, key: string, outcome: Outcome): Promise<void> {
  await kv.set(key, JSON.stringify(outcome), INVITE_TTL_MS);
}

/** A retry: the recorded outcome, or BUSY while the first copy is still in flight. */
async function replay(
  kv: KeyValue,
  key: string,
  fingerprint: string,
): Promise<{ pushed: number; skipped: number }> {
  const raw = await kv.get(key);
  if (raw === null || raw.startsWith(CLAIM_PREFIX)) throw errors.BUSY();
  const outcome = JSON.parse(raw) as Outcome;
  if (outcome.invitees !== fingerprint) throw errors.REQUEST_ID_REUSED();
  return answerOf(outcome);
}

/** §10: any logged-in user of the app; the token's meeting, or 邀请链接已失效. */
export async function redeemInvite(
  kv: KeyValue,
  req: { readonly app_code: string; readonly token: string },
): Promise<{ room_code: string; inviter_id: number | null; has_password: boolean }> {
  if (!INVITE_TOKEN_PATTERN.test(req.token)) throw AppError.from(refuse('INVITE_EXPIRED'));
  const raw = await kv.getCappingTtl(inviteKey(req.app_code, req.token), REDEEM_GRACE_MS);
  if (raw === null) throw AppError.from(refuse('INVITE_EXPIRED'));
  const value = JSON.parse(raw) as TokenValue;
  return {
    room_code: value.room_code,
    inviter_id: value.inviter_id,
    has_password: value.has_password,
  };
}
