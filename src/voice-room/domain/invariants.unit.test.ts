/**
 * Property tests of the voice room's invariants (DESIGN.md, invariant 4, and the seed's
 * rules): random command sequences over a small room (owner, admin, two more users, one of
 * them named `__proto__`; 3 seats), with time moving in random steps, RTC callbacks carrying
 * old, duplicated and reordered event times and session ids, and the deadline timer.
 * Commands run like the runtime runs them (see testing/random-room.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDomainError } from '../../domain/decider.js';
import { presenceOf } from './evolve.js';
import { presentEntries } from './presence-book.js';
import { voiceRoomFromSnapshot } from './snapshot.js';
import { ctx, fold } from './testing/given-when-then.js';
import {
  domain,
  newWorld,
  resolve,
  rtcClockArb,
  run,
  SEATS,
  stepArb,
  type World,
} from './testing/random-room.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from './types.js';

const PRESENCE_STATES: readonly string[] = [
  'present',
  'left',
  'stale_left',
  'kicked',
  'closed_left',
];

/** Invariants of any single state. */
function checkState(state: VoiceRoomState): void {
  if (state.status !== 'absent') {
    assert.ok(state.seats.length >= 1 && state.seats.length <= SEATS + 1, 'a room has its seats');
  }
  const holders: string[] = [];
  state.seats.forEach((s, i) => {
    assert.equal(s.seat_index, i);
    if (s.state === 'idle' || s.state === 'locked') {
      // A locked seat holds no user; an idle one neither.
      assert.equal(s.user_id, null, `seat ${i} ${s.state} holds no user`);
      assert.equal(s.mic_session_id, null);
      assert.equal(s.publish_deadline_ms, null);
    } else {
      assert.ok(s.user_id !== null && s.mic_session_id !== null, `seat ${i} ${s.state}`);
      assert.equal(s.publish_deadline_ms === null, s.state === 'publishing');
      holders.push(s.user_id);
    }
  });
  assert.equal(new Set(holders).size, holders.length, 'a user holds at most one seat');
  for (const u of holders) {
    assert.equal(presenceOf(state, u)?.state, 'present', `seat holder ${u} is present`);
  }
  for (const u of state.banned) {
    assert.notEqual(presenceOf(state, u)?.state, 'present', `banned ${u} is not present`);
  }
  for (const [u, p] of presentEntries(state.presence)) {
    assert.ok(PRESENCE_STATES.includes(p.state), `${u}: ${p.state}`);
    assert.ok(Number.isFinite(p.joined_at_ms) && p.last_seen_at_ms >= p.joined_at_ms, u);
  }
  // Seat applications: one per user, of a present member on no seat, only in apply mode.
  const applicants = (state.seat_applications ?? []).map((a) => a.user_id);
  assert.equal(new Set(applicants).size, applicants.length, 'one application per user');
  for (const u of applicants) {
    assert.equal(presenceOf(state, u)?.state, 'present', `applicant ${u} is present`);
    assert.ok(!holders.includes(u), `applicant ${u} holds no seat`);
  }
  if (state.seat_mode !== 'apply' || state.status !== 'active') {
    assert.deepEqual(applicants, [], 'applications only in an active room in apply mode');
  }
  // Seat invitations: one per user, of a present member on no seat, in an active room.
  const invitees = (state.seat_invitations ?? []).map((i) => i.user_id);
  assert.equal(new Set(invitees).size, invitees.length, 'one invitation per user');
  for (const u of invitees) {
    assert.equal(presenceOf(state, u)?.state, 'present', `invitee ${u} is present`);
    assert.ok(!holders.includes(u), `invitee ${u} holds no seat`);
  }
  if (state.status !== 'active') assert.deepEqual(invitees, []);
  for (const u of state.mic_muted ?? []) {
    assert.equal(presenceOf(state, u)?.state, 'present', `muted ${u} is present`);
  }
  if (state.status === 'closed') {
    assert.deepEqual(holders, []);
    for (const [, p] of presentEntries(state.presence)) assert.notEqual(p.state, 'present');
  }
}

/** The RTC times the world had applied before a step (RTC clock), per session and per user. */
interface RtcTimes {
  readonly session: ReadonlyMap<string, number>;
  readonly user: ReadonlyMap<string, number>;
}

/** Invariants of one step: the state before, the command, the decision, the state after. */
/**
 * The chat: a message only from a present member who is not muted, ids one after another;
 * a message touches no seat and no presence.
 */
function checkChatStep(
  before: VoiceRoomState,
  command: VoiceRoomCommand,
  result: ReturnType<typeof domain.decide>,
  after: VoiceRoomState,
  nowMs: number,
): void {
  const sent = isDomainError(result) ? [] : result.filter((e) => e.type === 'RoomMessageSent');
  if (sent.length === 0) return;
  assert.equal(command.type, 'SendRoomMessage');
  const user = sent[0]!.user_id;
  assert.equal(presenceOf(before, user)?.state, 'present', 'a message of a present member');
  const mutes = before.chat_mutes ?? {};
  const until = Object.hasOwn(mutes, user) ? mutes[user]! : -Infinity;
  assert.ok(until <= nowMs, 'no message while chat-muted');
  assert.equal(sent[0]!.message_id, (before.message_count ?? 0) + 1, 'ids one after another');
  assert.equal(after.seats, before.seats, 'a message moves no seat');
  assert.equal(after.presence, before.presence, 'a message changes no presence');
}

function checkStep(
  world: World,
  rtcBefore: RtcTimes,
  before: VoiceRoomState,
  command: VoiceRoomCommand,
  result: ReturnType<typeof domain.decide>,
): void {
  const after = world.state;
  const ok = !isDomainError(result) && result.length > 0;
  if (before.status === 'closed') {
    assert.ok(!ok, `a closed room took ${command.type}`);
  }
  if (!ok) assert.equal(after, before, 'an error or a no-op changes nothing');

  checkSeatsStep(before, command, after);
  checkSessionsStep(rtcBefore, before, command, result, after);
  checkChatStep(before, command, result, after, world.nowMs);
  if (ok) checkPermissions(before, command);
  if (command.type === 'RoomHeartbeat') {
    // Never creates presence: only a present user's heartbeat is accepted.
    assert.equal(ok, presenceOf(before, command.user_id)?.state === 'present', 'heartbeat');
    for (const [u, p] of presentEntries(after.presence)) {
      assert.equal(p.state, presenceOf(before, u)?.state, `heartbeat changed ${u}`);
    }
  }

  // The timer: whenever an alarm is due, the command it asks for does something.
  const alarm = domain.alarmCommand(after, world.nowMs);
  if (alarm) {
    const fired = domain.decide(after, alarm, ctx({ nowMs: world.nowMs }));
    assert.ok(!isDomainError(fired) && fired.length > 0, 'a due alarm makes progress');
  }
}

/** Seats change only through their own arrows; locks survive everything but an unlock. */
function checkSeatsStep(
  before: VoiceRoomState,
  command: VoiceRoomCommand,
  after: VoiceRoomState,
): void {
  before.seats.forEach((b, i) => {
    const a = after.seats[i];
    if (!a) {
      // Only SetSeatCount removes seats, and only seats nobody holds.
      assert.equal(command.type, 'SetSeatCount', `seat ${i} removed`);
      assert.equal(b.user_id, null, `held seat ${i} removed`);
      return;
    }
    const lockCommand = command.type === 'SetMicSeatLock' && command.seat_index === i;
    if (b.state === 'locked' && a.state !== 'locked') {
      assert.ok(lockCommand && !command.locked && a.state === 'idle', `seat ${i} unlocked`);
    }
    if (b.state !== 'locked' && a.state === 'locked') {
      assert.ok(lockCommand && command.locked, `seat ${i} locked`);
    }
    if (b.user_id !== null && a.user_id !== null) {
      // An occupied seat is never handed over or given a new session in place.
      assert.equal(a.user_id, b.user_id, `seat ${i} handed over`);
      assert.equal(a.mic_session_id, b.mic_session_id, `seat ${i} session replaced`);
    }
  });
}

/**
 * An RTC callback or a confirm that names another session leaves the seat alone. RTC times
 * are compared only with RTC times already applied (never with the server's): an RTC event
 * older than the session's last applied one leaves the seat alone, an audio_started must be
 * newer than it (and, without a session id, than every RTC event applied for the user), and
 * a stop or exit without a session id needs the session to have an applied RTC event first.
 * Whatever the server time, an event that passes those rules does apply. RTC callbacks never
 * fail and never touch presence.
 */
function checkSessionsStep(
  rtcBefore: RtcTimes,
  before: VoiceRoomState,
  command: VoiceRoomCommand,
  result: ReturnType<typeof domain.decide>,
  after: VoiceRoomState,
): void {
  if (command.type === 'ConfirmMicPublishing') {
    before.seats.forEach((b, i) => {
      if (b.user_id !== command.user_id || b.mic_session_id !== command.mic_session_id) {
        assert.deepEqual(after.seats[i], b, `confirm must leave seat ${i} alone`);
      }
    });
    return;
  }
  if (
    command.type !== 'RtcAudioStarted' &&
    command.type !== 'RtcAudioStopped' &&
    command.type !== 'RtcRoomExited'
  ) {
    return;
  }
  assert.ok(!isDomainError(result), 'RTC callbacks never fail');
  assert.deepEqual(after.presence, before.presence, 'RTC never changes presence');
  const t = command.event_time_ms;
  const named = command.mic_session_id !== undefined;
  const userLast = rtcBefore.user.get(command.user_id) ?? -Infinity;
  before.seats.forEach((b, i) => {
    const session = b.mic_session_id;
    const alone = () =>
      assert.deepEqual(
        after.seats[i],
        b,
        `${command.type} must leave seat ${i} (${session}) alone`,
      );
    if (session === null || b.user_id !== command.user_id) return alone();
    if (named && command.mic_session_id !== session) return alone();
    const anchor = rtcBefore.session.get(session);
    if (command.type === 'RtcAudioStarted') {
      const floor = Math.max(anchor ?? -Infinity, named ? -Infinity : userLast);
      if (t <= floor) return alone();
      if (b.state === 'pending_publish') {
        assert.equal(
          after.seats[i]!.state,
          'publishing',
          `audio_started at ${t} confirms ${session}`,
        );
      }
      return;
    }
    if (anchor === undefined ? !named : t < anchor) return alone();
    // A muted seat's audio stops by the mute (its producer paused): the seat stays.
    if (command.type === 'RtcAudioStopped' && b.muted) return alone();
    if (command.type === 'RtcRoomExited' || b.state === 'publishing') {
      assert.equal(after.seats[i]!.user_id, null, `${command.type} at ${t} ends ${session}`);
    }
  });
}

/** A command that took effect was allowed: owner, or an admin who is not banned. */
function checkPermissions(before: VoiceRoomState, command: VoiceRoomCommand): void {
  const owner = before.owner_user_id;
  const manages = (u: string) =>
    u === owner || (before.admins.includes(u) && !before.banned.includes(u));
  // The kick rule: nobody removes the owner; only the owner removes an admin.
  const outranks = (operator: string, target: string) => {
    assert.notEqual(target, owner, `${command.type}: ${operator} removed the owner`);
    if (before.admins.includes(target)) {
      assert.equal(operator, owner, `${command.type}: ${operator} removed admin ${target}`);
    }
  };
  switch (command.type) {
    case 'CloseRoom':
    case 'UnbanUser':
      assert.ok(
        manages(command.operator_user_id),
        `${command.type} by ${command.operator_user_id}`,
      );
      break;
    case 'SetMicSeatLock': {
      assert.ok(manages(command.operator_user_id), `lock by ${command.operator_user_id}`);
      const holder = before.seats[command.seat_index]?.user_id;
      if (command.locked && holder && holder !== command.operator_user_id) {
        outranks(command.operator_user_id, holder);
      }
      break;
    }
    case 'KickUser':
      assert.ok(manages(command.operator_user_id), `kick by ${command.operator_user_id}`);
      outranks(command.operator_user_id, command.user_id);
      break;
    case 'SetRoomAdmin':
      assert.equal(command.operator_user_id, owner, 'only the owner sets admins');
      break;
    case 'UpdateRoom':
    case 'ApproveSeatApplication':
    case 'RejectSeatApplication':
    case 'InviteToSeat':
    case 'SetSeatCount':
      assert.ok(
        manages(command.operator_user_id),
        `${command.type} by ${command.operator_user_id}`,
      );
      break;
    case 'SetSeatMuted': {
      assert.ok(manages(command.operator_user_id), `seat mute by ${command.operator_user_id}`);
      const holder = before.seats[command.seat_index]?.user_id;
      if (holder && holder !== command.operator_user_id) {
        outranks(command.operator_user_id, holder);
      }
      break;
    }
    case 'MoveToSeat':
      assert.ok(manages(command.operator_user_id), `move by ${command.operator_user_id}`);
      if (command.user_id !== command.operator_user_id) {
        outranks(command.operator_user_id, command.user_id);
      }
      break;
    case 'MicUp':
      if (before.seat_mode === 'apply') {
        assert.ok(manages(command.user_id), `MicUp in apply mode by ${command.user_id}`);
      }
      break;
    case 'MicDown':
      if (command.operator_user_id !== undefined && command.operator_user_id !== command.user_id) {
        assert.ok(manages(command.operator_user_id), `forced down by ${command.operator_user_id}`);
        outranks(command.operator_user_id, command.user_id);
      }
      break;
    default:
      break;
  }
}

function checkReplay(world: World, snapshotAt: number): void {
  assert.deepEqual(fold(world.events), world.state, 'replay rebuilds the state');
  const viaJson = JSON.parse(JSON.stringify(world.events)) as VoiceRoomEvent[];
  assert.deepEqual(fold(viaJson), world.state, 'replay of the logged JSON events');
  const snapshot = JSON.parse(JSON.stringify(world.state)) as VoiceRoomState;
  assert.deepEqual(snapshot, world.state, 'a JSON snapshot is the state');
  // Snapshot at some version, then replay the rest of the log after it.
  const version = snapshotAt % (world.version + 1);
  const stored = voiceRoomFromSnapshot(JSON.parse(JSON.stringify(world.states[version])));
  const rest = world.events.slice(world.logLength[version]);
  assert.deepEqual(
    rest.reduce((s, e) => domain.evolve(s, e), stored),
    world.state,
    'snapshot + rest of log',
  );
}

describe('voice room invariants (property)', () => {
  it('hold after every step of random command sequences, and replay rebuilds the state', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 10, maxLength: 80, size: 'max' }),
        fc.nat(),
        rtcClockArb,
        (steps, snapshotAt, rtcClock) => {
          const world = newWorld(rtcClock);
          checkState(world.state);
          for (const step of steps) {
            world.nowMs += step.dt;
            const command = resolve(world, step.spec);
            const before = world.state;
            const rtcBefore = {
              session: new Map(world.lastRtcTime),
              user: new Map(world.lastUserRtcTime),
            };
            const result = run(world, command);
            checkState(world.state);
            checkStep(world, rtcBefore, before, command, result);
          }
          checkReplay(world, snapshotAt);
        },
      ),
      { numRuns: 300 },
    );
  });
});
