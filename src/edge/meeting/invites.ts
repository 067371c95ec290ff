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
 * racing send once: the second answers `BUSY` (retry) while the first is in flight. A claim
 * whose node died before recording expires after {@link CLAIM_MS}; a retry after that
 * invites again (a second notification only if the first node died between the commit of
 * the notifications and the record: the window is one KeyValue write).
 */
import { randomBytes } from 'node:crypto';
import type { DomainError } from '../../domain/decider.js';
import { refuse } from '../../domain/meeting/errors.js';
import { isActive } from '../../domain/meeting/evolve.js';
import { checkMeetingAccess } from '../../domain/meeting/guards.js';
import type { MeetingState } from '../../domain/meeting/types.js';
import type { Clock } from '../../shared/clock.js';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';
import type { KeyValue } from '../../shared/key-value.js';
import { idJson } from './render.js';

/** The seed's `MeetingInviteTokenTTL`: 600 s. */
export const INVITE_TTL_MS = 600_000;
/** How long a redeemed token stays redeemable (the seed: 60 s of grace). */
export const REDEEM_GRACE_MS = 60_000;
/** How long an invite in flight holds its request id before another copy may run it. */
export const CLAIM_MS = 30_000;
export const INVITE_TOKEN_PATTERN = /^[0-9a-f]{32}$/;
export const MEETING_INVITE_TYPE = 'meeting_invite';

/** Port: the notification centre's per-recipient batch (one transaction for all). */
export interface InviteNotifier {
  pushEach(
    appCode: string,
    items: readonly {
      readonly recipient: string;
      readonly notification: {
        readonly type: string;
        readonly title: string;
        readonly content: string;
        readonly extra: Readonly<Record<string, unknown>>;
      };
    }[],
  ): Promise<unknown>;
}

/** Port: who a user is, as the invite card shows them (accounts' user repository). */
export interface InviteUsers {
  /** Null when the app has no such user. */
  profileOf(appCode: string, userId: string): Promise<{ nickname: string; avatar: string } | null>;
}

export interface MeetingInviteDeps {
  readonly kv: KeyValue;
  readonly notifier: InviteNotifier;
  readonly users: InviteUsers;
}

/** The KeyValue key of a token, scoped by app (another app's token is unknown here). */
export function inviteKey(appCode: string, token: string): string {
  return `meeting:invite:${appCode}:${token}`;
}

function requestKey(appCode: string, roomCode: string, scopedRequestId: string): string {
  return `meeting:invite-req:${appCode}:${roomCode}:${scopedRequestId}`;
}

/** What the store keeps per token: the seed's value, exactly. */
interface TokenValue {
  room_code: string;
  inviter_id: number | string | null;
  invitee_id: number | string | null;
  has_password: boolean;
}

type Outcome =
  | { readonly invitees: string; readonly answer: { pushed: number; skipped: number } }
  | { readonly invitees: string; readonly refused: DomainError };

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
  // The same request id with other invitees is another operation, not a retry.
  const fingerprint = [...invitees].sort().join(',');
  const key = requestKey(req.app_code, req.room_code, req.request_key);
  if (!(await kv.setIfAbsent(key, 'pending', CLAIM_MS))) return replay(kv, key, fingerprint);
  const denied = state ? checkMeetingAccess(state, req.caller_id) : refuse('MEETING_NOT_FOUND');
  let outcome: Outcome;
  try {
    outcome = denied
      ? { invitees: fingerprint, refused: denied }
      : { invitees: fingerprint, answer: await send(deps, req, state!, invitees) };
  } catch (error) {
    // Nothing decided (a store failed, or bad input): free the request id for a retry.
    await kv.del(key).catch(() => undefined);
    throw error;
  }
  await record(kv, key, outcome);
  return answerOf(outcome);
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
): Promise<{ pushed: number; skipped: number }> {
  const pending = invitees.filter((id) => !isActive(state, id));
  const skipped = invitees.length - pending.length;
  if (pending.length === 0) return { pushed: 0, skipped };
  const inviter = (await deps.users.profileOf(req.app_code, req.caller_id)) ?? {
    nickname: '',
    avatar: '',
  };
  const expiresAtMs = deps.clock.nowMs() + INVITE_TTL_MS;
  const items = [];
  for (const invitee of pending) {
    const token = randomBytes(16).toString('hex');
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
  await deps.notifier.pushEach(req.app_code, items);
  return { pushed: pending.length, skipped };
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
  if (raw === null || raw === 'pending') throw errors.BUSY();
  const outcome = JSON.parse(raw) as Outcome;
  if (outcome.invitees !== fingerprint) throw errors.REQUEST_ID_REUSED();
  return answerOf(outcome);
}

/** §10: any logged-in user of the app; the token's meeting, or 邀请链接已失效. */
export async function redeemInvite(
  kv: KeyValue,
  req: { readonly app_code: string; readonly token: string },
): Promise<{ room_code: string; inviter_id: number | string | null; has_password: boolean }> {
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
