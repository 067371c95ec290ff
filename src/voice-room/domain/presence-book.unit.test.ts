/**
 * The room's presence (a persistent book of present users, ./presence-book.ts) against a
 * plain model of the Presence machine as the room kept it before: a record of everyone who
 * ever came in, with their state. Random joins, heartbeats, leaves, kicks, unbans, timer
 * ticks and a close run through both, at times that sometimes go back (the room moved to a
 * node whose clock is behind). Both must agree on every answer (events or refusal), the
 * members list in its order, the online count, the next deadline and the stale events; a
 * snapshot of either form must load to the same state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDomainError } from '../../domain/decider.js';
import { voiceRoomDomain } from './domain.js';
import { voiceRoomFromSnapshot } from './snapshot.js';
import {
  activeRoom,
  ctx,
  deepFreeze,
  fold,
  given,
  joined,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { PresenceState, VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from './types.js';
import { roomView } from './view.js';

const domain = voiceRoomDomain(settings);
const TIMEOUT = settings.presenceTimeoutMs;
const OWNER = '1';
/** Account ids as the API has them; the last is beyond a JS array index (4294967294). */
const USERS = ['7', '12', '30', '1001', '4294967294', '999999999999999'] as const;

/** The room as it kept presence before: a plain record, in a JS object's key order. */
interface Model {
  status: 'active' | 'closed';
  banned: string[];
  presence: Record<string, { state: PresenceState; joined_at_ms: number; last_seen_at_ms: number }>;
}

const isPresentIn = (m: Model, u: string) => m.presence[u]?.state === 'present';

function modelDecide(m: Model, c: VoiceRoomCommand, now: number): VoiceRoomEvent[] | string {
  if (c.type === 'ExpireDeadlines') {
    if (m.status !== 'active') return [];
    return Object.keys(m.presence)
      .filter((u) => isPresentIn(m, u) && m.presence[u]!.last_seen_at_ms + TIMEOUT <= now)
      .map((u) => ({ type: 'PresenceStale', user_id: u, at_ms: now }));
  }
  if (m.status !== 'active') return 'ROOM_CLOSED';
  switch (c.type) {
    case 'JoinRoom':
      if (m.banned.includes(c.user_id)) return 'USER_BANNED';
      return isPresentIn(m, c.user_id)
        ? [{ type: 'PresenceRefreshed', user_id: c.user_id, at_ms: now }]
        : [{ type: 'UserJoined', user_id: c.user_id, at_ms: now }];
    case 'RoomHeartbeat':
      return isPresentIn(m, c.user_id)
        ? [{ type: 'PresenceRefreshed', user_id: c.user_id, at_ms: now }]
        : 'NOT_IN_ROOM';
    case 'LeaveRoom':
      return isPresentIn(m, c.user_id)
        ? [{ type: 'UserLeft', user_id: c.user_id, at_ms: now }]
        : 'NOT_IN_ROOM';
    case 'KickUser':
      if (m.banned.includes(c.user_id) && !isPresentIn(m, c.user_id)) return [];
      return [{ type: 'UserKicked', user_id: c.user_id, operator_user_id: c.operator_user_id }];
    case 'UnbanUser':
      return m.banned.includes(c.user_id)
        ? [{ type: 'UserUnbanned', user_id: c.user_id, operator_user_id: c.operator_user_id }]
        : 'NOT_BANNED';
    case 'CloseRoom':
      return [{ type: 'RoomClosed', operator_user_id: c.operator_user_id, at_ms: now }];
    default:
      throw new Error(`not modelled: ${c.type}`);
  }
}

function modelEvolve(m: Model, e: VoiceRoomEvent): void {
  const p = 'user_id' in e ? m.presence[e.user_id] : undefined;
  switch (e.type) {
    case 'UserJoined':
      m.presence[e.user_id] = { state: 'present', joined_at_ms: e.at_ms, last_seen_at_ms: e.at_ms };
      break;
    case 'PresenceRefreshed':
      if (p) p.last_seen_at_ms = e.at_ms;
      break;
    case 'UserLeft':
      if (p) p.state = 'left';
      break;
    case 'PresenceStale':
      if (p) p.state = 'stale_left';
      break;
    case 'UserKicked':
      if (p) p.state = 'kicked';
      if (!m.banned.includes(e.user_id)) m.banned.push(e.user_id);
      break;
    case 'UserUnbanned':
      m.banned = m.banned.filter((u) => u !== e.user_id);
      break;
    case 'RoomClosed':
      m.status = 'closed';
      for (const q of Object.values(m.presence)) if (q.state === 'present') q.state = 'closed_left';
      break;
    default:
      throw new Error(`not modelled: ${e.type}`);
  }
}

function modelMembers(m: Model) {
  return Object.entries(m.presence)
    .filter(([, p]) => p.state === 'present')
    .map(([user_id, p]) => ({
      user_id,
      joined_at_ms: p.joined_at_ms,
      last_seen_at_ms: p.last_seen_at_ms,
    }));
}

function modelDeadline(m: Model): number | null {
  const seen = Object.values(m.presence).flatMap((p) =>
    p.state === 'present' ? [p.last_seen_at_ms] : [],
  );
  return m.status === 'active' && seen.length > 0 ? Math.min(...seen) + TIMEOUT : null;
}

type Step =
  | { readonly t: 'JoinRoom' | 'RoomHeartbeat' | 'LeaveRoom' | 'KickUser' | 'UnbanUser' }
  | { readonly t: 'ExpireDeadlines' | 'Alarm' };

const user = fc.constantFrom(...USERS);
const stepArb = fc.record({
  // Mostly forward, sometimes back (another node's clock), sometimes past the timeout.
  dt: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0, max: 20_000 }) },
    { weight: 2, arbitrary: fc.integer({ min: -40_000, max: -1 }) },
    { weight: 1, arbitrary: fc.integer({ min: 50_000, max: 120_000 }) },
  ),
  user,
  step: fc.oneof(
    { weight: 4, arbitrary: fc.constant<Step>({ t: 'JoinRoom' }) },
    { weight: 8, arbitrary: fc.constant<Step>({ t: 'RoomHeartbeat' }) },
    { weight: 2, arbitrary: fc.constant<Step>({ t: 'LeaveRoom' }) },
    { weight: 1, arbitrary: fc.constant<Step>({ t: 'KickUser' }) },
    { weight: 1, arbitrary: fc.constant<Step>({ t: 'UnbanUser' }) },
    { weight: 2, arbitrary: fc.constant<Step>({ t: 'ExpireDeadlines' }) },
    { weight: 2, arbitrary: fc.constant<Step>({ t: 'Alarm' }) },
  ),
});

function commandOf(step: Step, u: string): VoiceRoomCommand {
  switch (step.t) {
    case 'JoinRoom':
    case 'RoomHeartbeat':
    case 'LeaveRoom':
      return { type: step.t, user_id: u };
    case 'KickUser':
    case 'UnbanUser':
      return { type: step.t, user_id: u, operator_user_id: OWNER };
    default:
      return { type: 'ExpireDeadlines' };
  }
}

/** Both forms of snapshot load to `state`: today's as is, the plain record of before. */
function checkSnapshots(state: VoiceRoomState, m: Model): void {
  const stored = JSON.parse(JSON.stringify(state)) as VoiceRoomState;
  assert.deepEqual(voiceRoomFromSnapshot(stored), state, 'a snapshot round-trips');
  const before = { ...stored, presence: structuredClone(m.presence) };
  assert.deepEqual(voiceRoomFromSnapshot(before), state, 'a snapshot of before loads');
}

describe('presence book against the plain model (property)', () => {
  it('agrees on every answer, the members, the next deadline and the stale events', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 1, maxLength: 120, size: 'max' }),
        fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
        (steps, closeAt) => {
          let state = deepFreeze(fold(activeRoom({ owner: OWNER })));
          const model: Model = { status: 'active', banned: [], presence: {} };
          const log: VoiceRoomEvent[] = [];
          let now = T0;
          let version = 2;
          steps.forEach(({ dt, user: u, step }, i) => {
            now = Math.max(0, now + dt);
            if (step.t === 'Alarm') {
              const due = domain.nextDeadline(state);
              if (due !== null && due > now) now = due;
            }
            const command: VoiceRoomCommand =
              closeAt !== null && i === closeAt % steps.length
                ? { type: 'CloseRoom', operator_user_id: OWNER }
                : step.t === 'Alarm'
                  ? (domain.alarmCommand(state, now) ?? { type: 'ExpireDeadlines' })
                  : commandOf(step, u);
            const result = domain.decide(state, command, ctx({ nowMs: now, version }));
            const expected = modelDecide(model, command, now);
            if (typeof expected === 'string') {
              assert.ok(isDomainError(result), `${command.type} refused`);
              assert.equal(result.code, expected);
            } else {
              assert.deepEqual(result, expected, `${command.type} at ${now}`);
              const before = state;
              const beforeMembers = roomView(before, version).members;
              state = deepFreeze(expected.reduce((s, e) => domain.evolve(s, e), state));
              for (const e of expected) modelEvolve(model, e);
              log.push(...expected);
              if (expected.length > 0) version += 1;
              assert.deepEqual(roomView(before, 0).members, beforeMembers, 'old state unchanged');
              assert.deepEqual(domain.reply?.(state, command, expected), { status: model.status });
            }
            const view = roomView(state, version);
            assert.deepEqual(view.members, modelMembers(model), 'members, in order');
            assert.equal(view.online_count, modelMembers(model).length);
            assert.equal(domain.nextDeadline(state), modelDeadline(model), 'next deadline');
            const due = modelDeadline(model);
            assert.deepEqual(
              domain.alarmCommand(state, now),
              due !== null && due <= now ? { type: 'ExpireDeadlines' } : null,
            );
            if (i % 10 === 0) checkSnapshots(state, model);
          });
          checkSnapshots(state, model);
          assert.deepEqual(fold([...activeRoom({ owner: OWNER }), ...log]), state, 'replay');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('presence book examples', () => {
  const refreshed = (user_id: string, at_ms: number): VoiceRoomEvent => ({
    type: 'PresenceRefreshed',
    user_id,
    at_ms,
  });
  const stale = (user_id: string, at_ms: number): VoiceRoomEvent => ({
    type: 'PresenceStale',
    user_id,
    at_ms,
  });

  it('a heartbeat stamped before the last one (another node’s clock) moves the deadline back', () => {
    const history = [...activeRoom(), joined('7', T0 + 10), joined('12', T0 + 20)];
    const ahead = fold([...history, refreshed('7', T0 + 30)]);
    assert.equal(domain.nextDeadline(ahead), T0 + 20 + TIMEOUT);
    const behind = fold([refreshed('12', T0 + 5)], ahead);
    assert.equal(domain.nextDeadline(behind), T0 + 5 + TIMEOUT);
    given(...history, refreshed('7', T0 + 30), refreshed('12', T0 + 5))
      .when({ type: 'ExpireDeadlines' }, { nowMs: T0 + 5 + TIMEOUT })
      .then([stale('12', T0 + 5 + TIMEOUT)]);
  });

  it('expires everyone due at once in the members’ order, not the order they were seen', () => {
    given(activeRoom(), joined('30', T0), joined('7', T0 + 1), joined('12', T0 + 2))
      .when({ type: 'ExpireDeadlines' }, { nowMs: T0 + 2 + TIMEOUT })
      .then([
        stale('7', T0 + 2 + TIMEOUT),
        stale('12', T0 + 2 + TIMEOUT),
        stale('30', T0 + 2 + TIMEOUT),
      ]);
  });
});
