/**
 * The RTC side of a mic session: TRTC's audio start, and sometimes the audio stop or the
 * room exit that follows, sent to the callback endpoint. The injector's RTC faults act here,
 * per session: an event dropped, an event delivered twice (the same UniqueId, to another
 * node), or the session's two events delivered in the wrong order. Each feed applies each
 * fault to the first session it can, so even a short run has every one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosClient } from './client.js';
import type { FaultLog } from './faults.js';
import type { Prng } from './prng.js';

/** The share of sessions each RTC fault hits. */
const RTC_FAULT_SHARE = { 'rtc-drop': 0.12, 'rtc-duplicate': 0.12, 'rtc-reorder': 0.12 } as const;

interface RtcEvent {
  readonly type: 104 | 203 | 204;
  readonly timeMs: number;
  readonly uniqueId: string;
}

export class RtcFeed {
  readonly #pending = new Set<Promise<void>>();
  readonly #applied = new Set<string>();

  constructor(
    private readonly client: ChaosClient,
    private readonly prng: Prng,
    private readonly faults: FaultLog,
  ) {}

  /** A seat was taken: plays its session's RTC events (in the background). */
  sessionOpened(roomId: string, userId: string, sessionId: string): void {
    if (!this.prng.chance(0.8)) return; // some sessions never publish: the deadline releases them
    const t0 = Date.now();
    const events: RtcEvent[] = [{ type: 203, timeMs: t0 + 100, uniqueId: `${sessionId}:203` }];
    if (this.prng.chance(0.5)) {
      const type = this.prng.chance(0.7) ? 204 : 104;
      events.push({
        type,
        timeMs: t0 + this.prng.int(600, 2_500),
        uniqueId: `${sessionId}:${type}`,
      });
    }
    const order = [...events];
    if (order.length === 2 && this.#hits('rtc-reorder')) {
      order.reverse();
      this.faults.record('rtc-reorder', `${roomId} ${userId} session ${sessionId}`);
    }
    if (this.#hits('rtc-drop')) {
      const dropped = order.splice(this.prng.int(0, order.length - 1), 1)[0]!;
      this.faults.record('rtc-drop', `${roomId} ${userId} event ${dropped.uniqueId}`);
    }
    const duplicate =
      order.length > 0 && this.#hits('rtc-duplicate') ? this.prng.int(0, order.length - 1) : -1;
    if (duplicate >= 0) {
      this.faults.record(
        'rtc-duplicate',
        `${roomId} ${userId} event ${order[duplicate]!.uniqueId}`,
      );
    }
    const delays = order.map(() => this.prng.int(50, 400));
    this.#track(this.#play(roomId, userId, order, delays, duplicate));
  }

  async #play(
    roomId: string,
    userId: string,
    order: readonly RtcEvent[],
    delays: readonly number[],
    duplicate: number,
  ): Promise<void> {
    for (const [i, event] of order.entries()) {
      await sleep(delays[i]);
      const send = () => this.client.rtc(event.type, roomId, userId, event.timeMs, event.uniqueId);
      const { record } = await send();
      if (i === duplicate) {
        // TRTC's own retry: the same UniqueId again, a little later, wherever it lands.
        this.#track(sleep(this.prng.int(0, 600)).then(() => this.client.resend(record)));
      }
    }
  }

  /** Whether a session gets `fault`: its share of them, and surely the first one it can. */
  #hits(fault: keyof typeof RTC_FAULT_SHARE): boolean {
    const hit = !this.#applied.has(fault) || this.prng.chance(RTC_FAULT_SHARE[fault]);
    if (hit) this.#applied.add(fault);
    return hit;
  }

  #track(work: Promise<void>): void {
    const p = work.catch(() => undefined).finally(() => this.#pending.delete(p));
    this.#pending.add(p);
  }

  /** Waits for every event still being played. */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
