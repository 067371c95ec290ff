/**
 * The per-user rate limit of a voice room's public chat: messages per user per window, in
 * the shared {@link RateLimiter} (Redis in a cluster, so every node counts every message).
 * Counted on the room's owner only, once per request: a retry of a decided request is not
 * counted again and gets its first answer even past the limit.
 */
import { errors } from '../../shared/error-codes.js';
import type { RateLimiter, RateRule } from '../../shared/rate-limiter.js';
import type { VoiceRoomStore } from './voice-store.js';

export interface ChatAdmission {
  readonly appCode: string;
  readonly roomId: string;
  readonly userId: string;
  readonly requestId: string | undefined;
}

export class ChatAllowance {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly rule: RateRule,
  ) {}

  /**
   * Runs `send` with one message taken from the user's allowance, given back when `send`
   * throws (a refused or failed message uses up nothing).
   * @throws RateLimitedError `CHAT_RATE_LIMITED` past it (unless the request was decided).
   */
  async admit<T>(
    call: ChatAdmission,
    store: Pick<VoiceRoomStore, 'requestDecided'>,
    send: () => Promise<T>,
  ): Promise<T> {
    const { limit, windowMs } = this.rule;
    if (limit <= 0) return send();
    const key = `voice:chat:${call.appCode}:${call.userId}`;
    const state = await this.limiter.hit(key, windowMs);
    if (state.count <= limit) {
      try {
        return await send();
      } catch (error) {
        await this.limiter.undo(key).catch(() => undefined);
        throw error;
      }
    }
    await this.limiter.undo(key);
    const decided =
      call.requestId !== undefined &&
      (await store.requestDecided(call.appCode, call.roomId, call.requestId));
    // Its first answer, whatever it was; nothing is counted for it.
    if (decided) return send();
    const waitMs = state.resetInMs;
    throw errors.CHAT_RATE_LIMITED.after(waitMs, Math.max(1, Math.ceil(waitMs / 1000)));
  }
}
