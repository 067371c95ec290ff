/**
 * The cap on a meeting's live invite tokens across the edge of a token lifetime: tokens
 * issued just before the edge are still alive just after it, and still count.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter } from '../../adapters/memory/memory-rate-limiter.js';
import { INVITE_TTL_MS } from './invites.js';
import { MeetingLimits } from './limits.js';

const OFF = { limit: 0, windowMs: 1_000 };

describe('MeetingLimits: live invite tokens per meeting', () => {
  it('counts tokens still alive across a block edge, and frees them once expired', async () => {
    let nowMs = 10 * INVITE_TTL_MS - 1_000; // 1 s before an edge
    const clock = { nowMs: () => nowMs };
    const limits = new MeetingLimits(
      new MemoryRateLimiter({ clock }),
      {
        invitesPerUser: OFF,
        inviteTokensPerMeeting: 100,
        chatsPerUser: OFF,
        lookupFailsPerUser: OFF,
        lookupFailsPerAddress: OFF,
      },
      clock,
    );
    await limits.reserveInvites('app', 'host', '100-200-300', 60);
    nowMs += 2_000; // past the edge: those 60 live 598 s more
    await assert.rejects(limits.reserveInvites('app', 'host', '100-200-300', 50), {
      code: 'INVITE_RATE_LIMITED',
    });
    const refund = await limits.reserveInvites('app', 'host', '100-200-300', 40);
    await assert.rejects(limits.reserveInvites('app', 'guest', '100-200-300', 1), {
      code: 'INVITE_RATE_LIMITED',
    });
    // A run that sent nothing gives its tokens back.
    await refund();
    await limits.reserveInvites('app', 'guest', '100-200-300', 40);
    // Another meeting has its own cap.
    await limits.reserveInvites('app', 'host', '100-200-301', 100);
    // Once the first 60 expired (a whole block later), they no longer count.
    nowMs += INVITE_TTL_MS;
    await limits.reserveInvites('app', 'host', '100-200-300', 60);
  });
});
