/**
 * Property tests of the meeting's invariants: random command sequences over five users (one
 * named `__proto__`), random password verdicts and capacities, time moving in steps short
 * and long (past the empty TTL, the host grace and the stale limit) and the timer worker.
 * After every step: at most one host, and the host is an active participant while anyone
 * is active in a meeting in progress; active count ≤ max_members; an ended meeting has
 * nobody active and no timer; presence entries are one per (user, node), of active members
 * only, and a host in grace has none; a refusal changes nothing; a due alarm fires exactly
 * once.
 * At the end, replaying the log (also through JSON) rebuilds the state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { invalidArgument, isDomainError } from '../../domain/decider.js';
import { meetingReasons } from './errors.js';
import { activeParticipants, participantOf, presenceOf, presenceOfUser } from './evolve.js';
import { ctx, fold } from './testing/given-when-then.js';
import {
  commandOf,
  kind,
  newWorld,
  run,
  scenarioArb,
  type World,
} from './testing/random-meeting.js';
import type { MeetingCommand, MeetingEvent, MeetingState } from './types.js';
import { meetingDetail } from './view.js';

/** The meeting's refusals, and bad input (one code for every layer, defined with the decider). */
const CODES = new Set<string>([...meetingReasons.map((r) => r.code), invalidArgument('').code]);

function checkState(state: MeetingState, world: World): void {
  const active = activeParticipants(state);
  const users = state.participants.map((p) => p.user_id);
  const rows = state.participants.map((p) => p.participant_id);
  assert.equal(new Set(users).size, users.length, 'one row per user');
  assert.equal(new Set(rows).size, rows.length, 'row ids are unique');
  assert.equal(state.chat_count, world.chats, 'chat ids count the chats');
  for (const p of state.participants) {
    assert.equal(p.left_at_ms === null, p.left_reason === null, `${p.user_id} left fields`);
    assert.ok(Number.isInteger(p.duration_s) && p.duration_s >= 0, `${p.user_id} duration`);
    if (p.left_at_ms === null) assert.equal(p.duration_s, 0, 'an active row has duration 0');
  }
  const hosts = meetingDetail(state).participants.filter((p) => p.role === 1);
  assert.ok(hosts.length <= 1, 'at most one host');
  const leases = presenceOf(state).map((e) => `${e.user_id}\u0000${e.node_id}`);
  assert.equal(new Set(leases).size, leases.length, 'one presence entry per (user, node)');
  for (const e of presenceOf(state)) {
    assert.ok(participantOf(state, e.user_id)?.left_at_ms === null, 'presence of active only');
  }
  if (state.status === null) {
    assert.deepEqual(state.participants, []);
    return;
  }
  assert.ok(state.max_members >= 2 && state.max_members <= 8, 'max_members 2-8');
  assert.ok(active.length <= state.max_members, 'active count ≤ max_members');
  if (state.status === 1) {
    if (active.length > 0) {
      assert.equal(hosts.length, 1, 'an occupied meeting in progress has its host inside');
      assert.equal(hosts[0]!.user_id, state.host_id);
    }
    assert.equal(state.empty_deadline_ms !== null, active.length === 0, 'empty TTL ⇔ empty');
    if (state.host_grace) {
      assert.equal(state.host_grace.user_id, state.host_id, 'the grace is the host’s');
      assert.ok(participantOf(state, state.host_grace.user_id)?.left_at_ms === null);
      assert.deepEqual(presenceOfUser(state, state.host_grace.user_id), [], 'no grace while live');
    }
  } else {
    assert.equal(state.status, 2);
    assert.deepEqual(active, [], 'an ended meeting has nobody active');
    assert.equal(state.empty_deadline_ms, null);
    assert.equal(state.host_grace, null);
    assert.deepEqual(presenceOf(state), [], 'an ended meeting has no presence');
    assert.equal(kind.nextDeadline(state), null, 'an ended meeting waits for nothing');
    assert.ok(state.ended_reason !== null && state.ended_at_ms !== null);
  }
}

function checkStep(
  world: World,
  before: MeetingState,
  command: MeetingCommand,
  result: ReturnType<typeof run>,
): void {
  const after = world.state;
  const ok = !isDomainError(result) && result.length > 0;
  if (isDomainError(result)) assert.ok(CODES.has(result.code), `${result.code} is in the table`);
  if (!ok) assert.equal(after, before, 'a refusal or a no-op changes nothing');
  if (before.status === 2) assert.ok(!ok, `an ended meeting took ${command.type}`);
  if (ok) checkAccepted(before, command, after, result);

  // The timer: a due alarm makes progress, and the same alarm again does nothing.
  const alarm = kind.alarmCommand(after, world.nowMs);
  if (alarm) {
    const fired = kind.decide(after, alarm, ctx({ nowMs: world.nowMs }));
    assert.ok(!isDomainError(fired) && fired.length > 0, 'a due alarm makes progress');
    const next = fired.reduce((s, e) => kind.evolve(s, e), after);
    assert.deepEqual(kind.decide(next, alarm, ctx({ nowMs: world.nowMs })), [], 'fires once');
  }
}

/** What an accepted command may have done, from the contract. */
function checkAccepted(
  before: MeetingState,
  command: MeetingCommand,
  after: MeetingState,
  events: readonly MeetingEvent[],
): void {
  switch (command.type) {
    case 'JoinMeeting': {
      const row = participantOf(before, command.user_id);
      assert.ok(row === undefined || row.left_at_ms !== null, 'an active member cannot join');
      assert.equal(
        participantOf(after, command.user_id)?.participant_id,
        row ? row.participant_id : command.participant_id,
        're-join reuses the row',
      );
      if (before.has_password) assert.equal(command.password, 'ok', 'password verdict');
      assert.ok(!command.in_other_meeting, 'single meeting');
      break;
    }
    case 'EndMeeting':
    case 'TransferHost':
    case 'KickMember':
      assert.equal(command.operator_user_id, before.host_id, 'host only');
      break;
    case 'ChangeMemberState':
      if ((command.target_user_id ?? command.user_id) !== command.user_id) {
        assert.equal(command.user_id, before.host_id, 'another member: host only');
      }
      break;
    case 'LeaveMeeting': {
      const changed = events.find((e) => e.type === 'HostChanged');
      if (changed) {
        // The host moves to the earliest-joined of those who stay.
        const stay = activeParticipants(before).filter((p) => p.user_id !== command.user_id);
        assert.equal(changed.new_host_id, stay[0]?.user_id, 'earliest-joined takes over');
      }
      break;
    }
    default:
      break;
  }
  if (before.status === 1 && after.status === 1) {
    assert.equal(after.room_code, before.room_code);
    assert.equal(after.max_members, before.max_members);
  }
}

function checkReplay(world: World): void {
  assert.deepEqual(fold(world.events), world.state, 'replay rebuilds the state');
  const viaJson = JSON.parse(JSON.stringify(world.events)) as MeetingEvent[];
  assert.deepEqual(fold(viaJson), world.state, 'replay of the logged JSON events');
  const snapshot = JSON.parse(JSON.stringify(world.state)) as MeetingState;
  assert.deepEqual(snapshot, world.state, 'a JSON snapshot is the state');
}

describe('meeting invariants (property)', () => {
  it('hold after every step of random command sequences, and replay rebuilds the state', () => {
    fc.assert(
      fc.property(scenarioArb, (steps) => {
        const world = newWorld();
        checkState(world.state, world);
        for (const step of steps) {
          world.nowMs += step.dt;
          const command = commandOf(world, step.spec);
          if (command === null) continue;
          const before = world.state;
          const result = run(world, command);
          checkState(world.state, world);
          checkStep(world, before, command, result);
        }
        checkReplay(world);
      }),
      { numRuns: 300 },
    );
  });

  it('the random sequences reach the interesting states', () => {
    // Guards the generator: a property over sequences that never get there proves little.
    const seen = new Set<string>();
    fc.assert(
      fc.property(scenarioArb, (steps) => {
        const world = newWorld();
        for (const step of steps) {
          world.nowMs += step.dt;
          const command = commandOf(world, step.spec);
          if (command) run(world, command);
        }
        for (const e of world.events) {
          seen.add(
            e.type === 'HostChanged' ? `HostChanged:${e.auto_reason ?? 'transfer'}` : e.type,
          );
          if (e.type === 'MeetingEnded') seen.add(`ended:${e.reason}`);
          if (e.type === 'MemberJoined' && e.rejoined) seen.add('rejoined');
          if (e.type === 'HostGraceStarted' && e.cause) seen.add(`grace:${e.cause}`);
        }
      }),
      // A fixed seed: whether rare events are reached must not depend on the run's luck.
      { numRuns: 300, seed: 20261201 },
    );
    for (const wanted of [
      'HostChanged:transfer',
      'HostChanged:host_left_with_members',
      'HostChanged:host_grace_expired',
      'HostChanged:empty_room_revived',
      'ended:host_ended',
      'ended:empty_ttl',
      'ended:system_error',
      'rejoined',
      'MeetingRevived',
      'HostGraceCancelled',
      'SocketsGone',
      'PresenceExpired',
      'grace:presence_expired',
      'ChatSent',
    ]) {
      assert.ok(seen.has(wanted), `some run reaches ${wanted}`);
    }
  });
});
