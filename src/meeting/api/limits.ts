/**
 * Limits on what one meeting user may make the system do, counted in the shared
 * {@link RateLimiter} (Redis in a cluster, so every node counts every request; in memory
 * when embedded):
 *
 * - invites: invitees (not requests) per inviter per window, and a cap on a meeting's live
 *   invite tokens: the tokens it issued in the current block of one token lifetime (600 s)
 *   and in the block before, which hold every token still alive;
 * - chat lines per user per window;
 * - failed meeting-code lookups (`会议不存在` answers) per user and per client address: past
 *   either, every code answers 429, known or not, until the window ends, so a sweep of codes
 *   learns nothing more.
 *
 * A refused request uses up nothing. Callers count only requests that are new (a retry of a
 * decided request gets its first answer and is not counted again).
 */
import { addressKey } from '../../accounts/login-throttle.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { errors, type ErrorCode } from '../../shared/error-codes.js';
import type { RateLimiter, RateRule } from '../../shared/rate-limiter.js';
import { INVITE_TTL_MS } from './invites.js';

export interface MeetingLimitRules {
  readonly invitesPerUser: RateRule;
  /** Invite tokens one meeting may have alive at once (a token lives 600 s); 0: no limit. */
  readonly inviteTokensPerMeeting: number;
  readonly chatsPerUser: RateRule;
  readonly lookupFailsPerUser: RateRule;
  readonly lookupFailsPerAddress: RateRule;
}

/** Gives back what an admitted request took, when it turned out to do nothing. */
export type Refund = () => Promise<void>;

interface Count {
  readonly key: string;
  readonly rule: RateRule;
}

export class MeetingLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly rules: MeetingLimitRules,
    /** Places invite tokens in blocks of one token lifetime. */
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Takes `count` invitees from the inviter's and the meeting's allowance.
   * @throws RateLimitedError `INVITE_RATE_LIMITED` when either would pass its limit.
   */
  async reserveInvites(
    appCode: string,
    inviterId: string,
    roomCode: string,
    count: number,
  ): Promise<Refund> {
    const key = `meeting:invite:user:${appCode}:${inviterId}`;
    const inviter = await this.#take(
      [{ key, rule: this.rules.invitesPerUser }],
      count,
      errors.INVITE_RATE_LIMITED,
    );
    try {
      const tokens = await this.#reserveTokens(appCode, roomCode, count);
      return async () => {
        await Promise.all([inviter(), tokens()]);
      };
    } catch (error) {
      await inviter();
      throw error;
    }
  }

  /**
   * Tokens live one lifetime, so every live token was issued in this block of one lifetime
   * or in the one before: their sum (never less than the live tokens) is what the cap bounds.
   */
  async #reserveTokens(appCode: string, roomCode: string, count: number): Promise<Refund> {
    const cap = this.rules.inviteTokensPerMeeting;
    if (cap <= 0 || count <= 0) return () => Promise.resolve();
    const nowMs = this.clock.nowMs();
    const block = Math.floor(nowMs / INVITE_TTL_MS);
    const keyOf = (b: number) => `meeting:invite:room:${appCode}:${roomCode}:${b}`;
    const [current, previous] = await Promise.all([
      this.limiter.hit(keyOf(block), 2 * INVITE_TTL_MS, count),
      this.limiter.peek(keyOf(block - 1)),
    ]);
    const refund = () => this.limiter.undo(keyOf(block), count);
    if (current.count + previous.count > cap) {
      await refund();
      // When this block ends, the one before stops counting.
      const waitMs = (block + 1) * INVITE_TTL_MS - nowMs;
      throw errors.INVITE_RATE_LIMITED.after(waitMs, seconds(waitMs));
    }
    return refund;
  }

  /**
   * Takes one chat line from the user's allowance.
   * @throws RateLimitedError `CHAT_RATE_LIMITED` past it.
   */
  admitChat(appCode: string, userId: string): Promise<Refund> {
    const key = `meeting:chat:${appCode}:${userId}`;
    return this.#take([{ key, rule: this.rules.chatsPerUser }], 1, errors.CHAT_RATE_LIMITED);
  }

  /**
   * Refuses every meeting lookup of a user or an address that named too many unknown codes.
   * @throws RateLimitedError `MEETING_LOOKUP_RATE_LIMITED` until the window ends.
   */
  async checkLookups(appCode: string, userId: string, address: string | null): Promise<void> {
    const waits = await Promise.all(
      this.#lookupCounts(appCode, userId, address).map(async ({ key, rule }) => {
        const state = await this.limiter.peek(key);
        return state.count >= rule.limit ? state.resetInMs : 0;
      }),
    );
    const waitMs = Math.max(0, ...waits);
    if (waitMs > 0) throw errors.MEETING_LOOKUP_RATE_LIMITED.after(waitMs, seconds(waitMs));
  }

  /** Counts a lookup that named an unknown code. */
  async lookupFailed(appCode: string, userId: string, address: string | null): Promise<void> {
    await Promise.all(
      this.#lookupCounts(appCode, userId, address).map(({ key, rule }) =>
        this.limiter.hit(key, rule.windowMs),
      ),
    );
  }

  #lookupCounts(appCode: string, userId: string, address: string | null): Count[] {
    const { lookupFailsPerUser, lookupFailsPerAddress } = this.rules;
    const counts: Count[] = [
      { key: `meeting:lookup:user:${appCode}:${userId}`, rule: lookupFailsPerUser },
    ];
    if (address !== null) {
      const key = `meeting:lookup:addr:${addressKey(address)}`;
      counts.push({ key, rule: lookupFailsPerAddress });
    }
    return counts.filter((c) => c.rule.limit > 0);
  }

  /** Hits every count by `amount`; past any limit, takes every hit back and refuses. */
  async #take(counts: readonly Count[], amount: number, error: ErrorCode): Promise<Refund> {
    const live = counts.filter((c) => c.rule.limit > 0);
    if (live.length === 0 || amount <= 0) return () => Promise.resolve();
    const states = await Promise.all(
      live.map(({ key, rule }) => this.limiter.hit(key, rule.windowMs, amount)),
    );
    const refund = async () => {
      await Promise.all(live.map(({ key }) => this.limiter.undo(key, amount)));
    };
    const over = states.filter((s, i) => s.count > live[i]!.rule.limit);
    if (over.length > 0) {
      await refund();
      const waitMs = Math.max(...over.map((s) => s.resetInMs));
      throw error.after(waitMs, seconds(waitMs));
    }
    return refund;
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
