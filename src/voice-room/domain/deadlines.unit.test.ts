/**
 * Durable timers: the earliest stale-presence or publish deadline (nextDeadline), the
 * system command that handles it (alarmCommand → ExpireDeadlines), and the domain wiring.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDomainError } from '../../domain/decider.js';
import { nextVoiceRoomDeadline } from './decide.js';
import { voiceRoomDomain } from './domain.js';
import { initialVoiceRoom } from './evolve.js';
import {
  activeRoom,
  closed,
  ctx,
  fold,
  given,
  joined,
  KEY,
  left,
  micTakenUp,
  NOW,
  onSeat,
  OWNER,
  publishingOnSeat,
  released,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { VoiceRoomEvent, VoiceRoomState } from './types.js';
import { replyOf } from './view.js';

const domain = voiceRoomDomain(settings);
const PRESENCE = settings.presenceTimeoutMs;
const PUBLISH = settings.publishTimeoutMs;
const next = (events: readonly VoiceRoomEvent[]) => nextVoiceRoomDeadline(fold(events), settings);
const refreshed = (user_id: string, at: number): VoiceRoomEvent => ({
  type: 'PresenceRefreshed',
  user_id,
  at_ms: at,
});

describe('nextVoiceRoomDeadline', () => {
  it('is null for rooms that are not active', () => {
    assert.equal(nextVoiceRoomDeadline(initialVoiceRoom(), settings), null);
    assert.equal(next([activeRoom()[0]!, joined(OWNER)]), null);
    assert.equal(next([...activeRoom(), ...onSeat('u-1', 0), closed()]), null);
    const closing: VoiceRoomState = {
      ...fold([...activeRoom(), ...onSeat('u-1', 0)]),
      status: 'closing',
    };
    assert.equal(nextVoiceRoomDeadline(closing, settings), null);
  });

  it('is null for a closed room even if its state still held deadlines', () => {
    const active = fold([...activeRoom(), ...onSeat('u-1', 0)]);
    const odd: VoiceRoomState = { ...active, status: 'closed' };
    assert.equal(nextVoiceRoomDeadline(odd, settings), null);
    assert.equal(domain.alarmCommand(odd, T0 + 10 * PRESENCE), null);
  });

  it('is null for an active room with nobody present', () => {
    assert.equal(next(activeRoom()), null);
    assert.equal(next([...activeRoom(), joined('u-1'), left('u-1')]), null);
  });

  it('is the earliest presence deadline: last_seen_at_ms + presenceTimeoutMs', () => {
    assert.equal(next([...activeRoom(), joined('u-1', T0 + 50)]), T0 + 50 + PRESENCE);
    assert.equal(
      next([...activeRoom(), joined('u-1'), joined('u-2', T0 + 10), refreshed('u-1', T0 + 20)]),
      T0 + 10 + PRESENCE,
    );
  });

  it('is the publish deadline when a pending seat is due first', () => {
    const events = [...activeRoom(), joined('u-1', T0), micTakenUp('u-1', 2, { at: T0 + 5 })];
    assert.equal(next(events), T0 + 5 + PUBLISH);
  });

  it('ignores publishing seats: they have no publish deadline', () => {
    assert.equal(next([...activeRoom(), ...publishingOnSeat('u-1', 2)]), T0 + PRESENCE);
  });

  it('is the presence deadline when it comes before the publish deadline', () => {
    const events = [
      ...activeRoom(),
      joined('u-old', T0 - PRESENCE + 1_000),
      ...onSeat('u-1', 2, { at: T0 }),
    ];
    assert.equal(next(events), T0 + 1_000);
  });
});

describe('alarmCommand', () => {
  const events = [...activeRoom(), ...onSeat('u-1', 2)];
  const state = fold(events);

  it('asks for ExpireDeadlines once the earliest deadline is due, not before', () => {
    assert.equal(domain.nextDeadline(state), T0 + PUBLISH);
    assert.equal(domain.alarmCommand(state, T0 + PUBLISH - 1), null);
    assert.deepEqual(domain.alarmCommand(state, T0 + PUBLISH), { type: 'ExpireDeadlines' });
    assert.deepEqual(domain.alarmCommand(state, T0 + PRESENCE + 1), { type: 'ExpireDeadlines' });
  });

  it('never asks for rooms without deadlines', () => {
    for (const s of [initialVoiceRoom(), fold(activeRoom()), fold([...events, closed()])]) {
      assert.equal(domain.alarmCommand(s, Number.MAX_SAFE_INTEGER), null);
    }
  });

  it('the command it asks for does something, and moves the deadline past now', () => {
    const cases: [VoiceRoomEvent[], number][] = [
      [events, T0 + PUBLISH],
      [events, T0 + PRESENCE],
      [[...activeRoom(), ...publishingOnSeat('u-1', 2), joined('u-2', T0 + 30_000)], T0 + PRESENCE],
      [[...activeRoom(), joined('u-1'), joined('u-2')], T0 + PRESENCE + 5],
    ];
    for (const [history, now] of cases) {
      const before = fold(history);
      const command = domain.alarmCommand(before, now);
      assert.ok(command);
      const result = domain.decide(before, command, ctx({ nowMs: now }));
      assert.ok(!isDomainError(result) && result.length > 0);
      const after = result.reduce((s, e) => domain.evolve(s, e), before);
      assert.equal(domain.alarmCommand(after, now), null);
      const due = domain.nextDeadline(after);
      assert.ok(due === null || due > now, `${due} > ${now}`);
    }
  });
});

describe('ExpireDeadlines', () => {
  it('handles every due deadline at once: stale presence first, then publish timeouts', () => {
    given(
      activeRoom(),
      ...onSeat('u-stale', 1, { at: T0 }),
      joined('u-1', T0 + 45_000),
      micTakenUp('u-1', 2, { at: T0 + 45_000, session: 'ms-1' }),
      joined('u-2', T0 + 50_000),
      micTakenUp('u-2', 3, { at: T0 + 56_000, session: 'ms-2' }),
    )
      .when({ type: 'ExpireDeadlines' }, { nowMs: T0 + PRESENCE })
      .then([
        released('u-stale', 1, 'stale'),
        { type: 'PresenceStale', user_id: 'u-stale', at_ms: T0 + PRESENCE },
        released('u-1', 2, 'publish_timeout', 'ms-1'),
      ]);
  });

  it('a stale user on a pending seat is released once, as stale', () => {
    given(activeRoom(), ...onSeat('u-1', 1))
      .when({ type: 'ExpireDeadlines' }, { nowMs: T0 + PRESENCE })
      .then([
        released('u-1', 1, 'stale'),
        { type: 'PresenceStale', user_id: 'u-1', at_ms: T0 + PRESENCE },
      ]);
  });

  it('does nothing when nothing is due', () => {
    given(activeRoom(), ...onSeat('u-1', 1))
      .when({ type: 'ExpireDeadlines' })
      .then([]);
    given().when({ type: 'ExpireDeadlines' }, { nowMs: NOW }).then([]);
  });
});

describe('voiceRoomDomain', () => {
  it('wires the pure decider under kind voice_room', () => {
    assert.equal(domain.kind, 'voice_room');
    assert.deepEqual(domain.initialState(KEY), initialVoiceRoom());
    const state = fold([...activeRoom(), joined('u-1')]);
    const join = { type: 'JoinRoom', user_id: 'u-2' } as const;
    assert.deepEqual(domain.reply?.(state, join, []), replyOf(state, join, []));
  });

  it('lets only CreateRoom bring a room into existence', () => {
    assert.equal(
      domain.creates?.({ type: 'CreateRoom', owner_user_id: OWNER, title: 't', seat_count: 1 }),
      true,
    );
    assert.equal(domain.creates?.({ type: 'JoinRoom', user_id: 'u-1' }), false);
    assert.equal(domain.creates?.({ type: 'ExpireDeadlines' }), false);
  });

  it('keeps heartbeats out of the outbox, sends everything else as is', () => {
    assert.equal(domain.toOutbox?.(refreshed('u-1', T0)), null);
    const event = joined('u-1');
    assert.deepEqual(domain.toOutbox?.(event), { type: 'UserJoined', data: event });
    assert.deepEqual(domain.toOutbox?.(closed()), { type: 'RoomClosed', data: closed() });
  });

  it('decides with the settings it was given', () => {
    const quick = voiceRoomDomain({ presenceTimeoutMs: 1_000, publishTimeoutMs: 500, maxSeats: 2 });
    const state = fold([...activeRoom({ seats: 2 }), joined('u-1')]);
    const up = quick.decide(state, { type: 'MicUp', user_id: 'u-1', seat_index: 0 }, ctx());
    assert.ok(!isDomainError(up));
    assert.equal(up[0]?.type === 'MicTakenUp' && up[0].publish_deadline_ms, NOW + 500);
    assert.equal(quick.nextDeadline(state), T0 + 1_000);
    const tooBig = quick.decide(
      initialVoiceRoom(),
      { type: 'CreateRoom', owner_user_id: OWNER, title: 't', seat_count: 3 },
      ctx(),
    );
    assert.ok(isDomainError(tooBig) && tooBig.code === 'INVALID_ARGUMENT');
  });
});
