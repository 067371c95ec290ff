/** A lease decorator for tests: pauses the caller right after a successful verifyOwner. */
import type { LeaseManager } from '../lease.js';

export interface PauseAfterVerify {
  readonly lease: LeaseManager;
  /** Arms one pause: `reached` resolves when a commit is paused, `release()` lets it go. */
  arm(): { reached: Promise<void>; release(): void };
}

export function pauseAfterVerify(inner: LeaseManager): PauseAfterVerify {
  let armed: { reached: () => void; released: Promise<void> } | null = null;
  const lease: LeaseManager = {
    ensureOwner: (route, nodeId, ttlMs) => inner.ensureOwner(route, nodeId, ttlMs),
    renew: (route, token, ttlMs) => inner.renew(route, token, ttlMs),
    release: (route, token) => inner.release(route, token),
    ownerOf: (route) => inner.ownerOf(route),
    close: () => inner.close(),
    async verifyOwner(route, token) {
      const ok = await inner.verifyOwner(route, token);
      const pause = armed;
      if (ok && pause) {
        armed = null;
        pause.reached();
        await pause.released;
      }
      return ok;
    },
  };
  return {
    lease,
    arm() {
      let reached!: () => void;
      let release!: () => void;
      const reachedP = new Promise<void>((r) => (reached = r));
      const released = new Promise<void>((r) => (release = r));
      armed = { reached, released };
      return { reached: reachedP, release };
    },
  };
}
