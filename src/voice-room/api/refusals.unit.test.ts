/**
 * Each RPC declares what it may be refused with (./commands.ts `refuses`), and the API
 * documents list exactly that per operation. Random command sequences (the invariants'
 * generator: absent, active and closed rooms, every role, seats out of range, stale mic
 * sessions) run through the decider, and every refusal must be one its command declares:
 * a reason missing from a declaration would reach a client as a code its generated types
 * say cannot happen.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDomainError } from '../../domain/decider.js';
import { newWorld, resolve, rtcClockArb, run, stepArb } from '../domain/testing/random-room.js';
import { declarationOf, rpcNames, type RpcName } from './commands.js';

/** Refused for any command by its input, never a rule of the room. */
const INPUT = 'INVALID_ARGUMENT';

describe('voice-room refusals (property)', () => {
  it('every refusal of the decider is one its command declares', () => {
    const seen = new Map<string, Set<string>>();
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 5, maxLength: 80, size: 'max' }),
        rtcClockArb,
        (steps, rtcClock) => {
          const world = newWorld(rtcClock);
          for (const step of steps) {
            world.nowMs += step.dt;
            const command = resolve(world, step.spec);
            const result = run(world, command);
            if (!isDomainError(result) || result.code === INPUT) continue;
            // The timer's command is the system's own: it never refuses (checked here too).
            assert.ok(
              (rpcNames as readonly string[]).includes(command.type),
              `${command.type} refused with ${result.code}`,
            );
            const declared = declarationOf(command.type as RpcName).refuses as readonly string[];
            assert.ok(
              declared.includes(result.code),
              `${command.type} refused with ${result.code}, which it does not declare`,
            );
            const codes = seen.get(command.type) ?? new Set<string>();
            seen.set(command.type, codes.add(result.code));
          }
        },
      ),
      { numRuns: 300 },
    );
    // The sequences do reach the rules (a generator that refused nothing would prove nothing).
    assert.ok(seen.get('MicUp')?.has('SEAT_OCCUPIED'), 'MicUp met a taken seat');
    assert.ok(seen.get('KickUser')?.has('NOT_ADMIN'), 'KickUser met a plain member');
    assert.ok(seen.get('JoinRoom')?.has('USER_BANNED'), 'JoinRoom met a ban');
  });

  it('declares only reasons of the room or the error registry, each once', () => {
    for (const method of rpcNames) {
      const declared = declarationOf(method).refuses;
      assert.equal(new Set(declared).size, declared.length, `${method} lists a reason twice`);
    }
  });
});
