/**
 * Each meeting call declares what it may be refused with (./commands.ts and
 * ./signal-calls.ts `refuses`), and the API documents list exactly that per operation.
 * Random scenarios (the invariants' generator: absent, live and ended meetings, hosts,
 * members, passwords, capacity, timers) run through the decider, and every refusal must be
 * one its command declares: a reason missing from a declaration would reach a client as a
 * code its generated types say cannot happen.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDomainError } from '../../domain/decider.js';
import { commandOf, newWorld, run, scenarioArb } from '../domain/testing/random-meeting.js';
import { meetingCalls, meetingMethods, type MeetingMethod } from './commands.js';

/** Refused for any command by its input, never a rule of the meeting. */
const INPUT = 'INVALID_ARGUMENT';

describe('meeting refusals (property)', () => {
  it('every refusal of the decider is one its command declares', () => {
    const seen = new Map<string, Set<string>>();
    fc.assert(
      fc.property(scenarioArb, (steps) => {
        const world = newWorld();
        for (const step of steps) {
          world.nowMs += step.dt;
          const command = commandOf(world, step.spec);
          if (command === null) continue;
          const result = run(world, command);
          if (!isDomainError(result) || result.code === INPUT) continue;
          // The timer's command is the node's own: no client receives its outcome.
          if (!(meetingMethods as readonly string[]).includes(command.type)) continue;
          const declared = meetingCalls[command.type as MeetingMethod].refuses as readonly string[];
          assert.ok(
            declared.includes(result.code),
            `${command.type} refused with ${result.code}, which it does not declare`,
          );
          const codes = seen.get(command.type) ?? new Set<string>();
          seen.set(command.type, codes.add(result.code));
        }
      }),
      // A fixed seed: which rules the runs reach must not depend on luck.
      { numRuns: 300, seed: 27 },
    );
    // The scenarios do reach the rules (a generator that refused nothing would prove nothing).
    assert.ok(seen.get('JoinMeeting')?.has('MEETING_ENDED'), 'JoinMeeting met an ended meeting');
    assert.ok(seen.get('KickMember')?.has('HOST_ONLY'), 'KickMember met a member');
  });

  it('declares each reason once', () => {
    for (const method of meetingMethods) {
      const declared = meetingCalls[method].refuses;
      assert.equal(new Set(declared).size, declared.length, `${method} lists a reason twice`);
    }
  });
});
