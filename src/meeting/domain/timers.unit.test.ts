/**
 * The meeting's durable timers (meeting-api.md Task 8): the host grace (S1 expiry → auto
 * transfer host_grace_expired; S2 rejoin within grace keeps the host), the empty TTL (S3 a
 * join within it revives; S4 expiry ends with empty_ttl and a later join is 会议已结束), and
 * the stale cleanup (4 h without activity → system_error). Each deadline fires once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDomainError } from '../../domain/decider.js';
import { meetingTimers } from './decide.js';
import { meetingKind } from './domain.js';
import {
  created,
  ctx,
  emptyTtlStarted,
  EXPIRE,
  fold,
  given,
  gone,
  graceStarted,
  HOST,
  hostChanged,
  join,
  joined,
  left,
  live,
  meetingWith,
  NODE_A,
  NOW,
  settings,
  socketLive,
  T0,
} from './testing/given-when-then.js';
import type { MeetingEvent } from './types.js';

const kind = meetingKind(settings);
const GRACE_END = T0 + settings.hostGraceMs;

describe('host grace', () => {
  it('the host’s last socket gone starts the grace; the deadline is the next alarm', () => {
    const state = given(meetingWith(['u-1']))
      .when(gone(), { nowMs: T0 })
      .then([graceStarted(HOST, T0)]);
    assert.equal(kind.nextDeadline(state), GRACE_END);
    assert.equal(kind.alarmCommand(state, GRACE_END - 1), null);
    assert.deepEqual(kind.alarmCommand(state, GRACE_END), { type: 'ExpireMeetingDeadlines' });
  });

  it('S1: expiry moves the host to the earliest-joined active member (host_grace_expired)', () => {
    const history = [
      ...created(),
      joined('u-late', 2, T0 + 50),
      joined('u-early', 3, T0 + 10),
      graceStarted(),
    ];
    const state = given(history)
      .when(EXPIRE, { nowMs: GRACE_END })
      .then([
        { type: 'HostGraceExpired', user_id: HOST, at_ms: GRACE_END },
        hostChanged(HOST, 'u-early', 'host_grace_expired', GRACE_END),
      ]);
    assert.equal(state.host_id, 'u-early');
    assert.equal(state.host_grace, null);
    // Fired once: the same alarm again (a retry, a second worker) does nothing.
    assert.deepEqual(kind.decide(state, EXPIRE, ctx({ nowMs: GRACE_END })), []);
  });

  it('S1 alone: the grace ends with nobody to take over; the host stays host', () => {
    const state = given(created(), graceStarted())
      .when(EXPIRE, { nowMs: GRACE_END })
      .then([{ type: 'HostGraceExpired', user_id: HOST, at_ms: GRACE_END }]);
    assert.equal(state.host_id, HOST);
  });

  it('S2: the host back within the grace cancels it and keeps the host', () => {
    const state = given(meetingWith(['u-1']), graceStarted())
      .when(live(), { nowMs: GRACE_END - 1 })
      .then([
        socketLive(HOST, NODE_A, GRACE_END - 1),
        { type: 'HostGraceCancelled', user_id: HOST, at_ms: GRACE_END - 1 },
      ]);
    assert.deepEqual(kind.decide(state, EXPIRE, ctx({ nowMs: GRACE_END })), []);
    assert.equal(state.host_id, HOST);
  });

  it('a second disconnect keeps the first deadline; a member’s or a stranger’s starts none', () => {
    given(meetingWith(['u-1']), graceStarted())
      .when(gone(), { nowMs: T0 + 2_000 })
      .then([]);
    given(meetingWith(['u-1']))
      .when(gone('u-1'))
      .then([]);
    given(meetingWith(['u-1']))
      .when(gone('u-9'))
      .then([]);
    given(meetingWith(['u-1']), left('u-1'))
      .when(gone('u-1'))
      .then([]);
  });

  it('a host change or the host leaving during the grace clears it', () => {
    const transferred = given(meetingWith(['u-1']), graceStarted())
      .when({ type: 'TransferHost', operator_user_id: HOST, target_user_id: 'u-1' })
      .then([hostChanged(HOST, 'u-1')]);
    assert.equal(transferred.host_grace, null);
    const gone = given(meetingWith(['u-1']), graceStarted())
      .when({ type: 'LeaveMeeting', user_id: HOST })
      .then([
        left(HOST, { duration: 1, at: NOW }),
        hostChanged(HOST, 'u-1', 'host_left_with_members'),
      ]);
    assert.equal(gone.host_grace, null);
    assert.deepEqual(kind.decide(gone, EXPIRE, ctx({ nowMs: GRACE_END })), []);
  });
});

describe('empty TTL', () => {
  const emptied = [...created(), left(HOST), emptyTtlStarted()];
  const TTL_END = T0 + settings.emptyTtlMs;

  it('S3: a join within the TTL revives the meeting; the TTL no longer fires', () => {
    const state = given(emptied)
      .when(join('u-1'), { nowMs: TTL_END - 1 })
      .then([
        { type: 'MeetingRevived', at_ms: TTL_END - 1 },
        joined('u-1', 2, TTL_END - 1, false, 1),
        hostChanged(HOST, 'u-1', 'empty_room_revived', TTL_END - 1),
      ]);
    assert.equal(state.status, 1);
    assert.deepEqual(kind.decide(state, EXPIRE, ctx({ nowMs: TTL_END })), []);
    assert.equal(kind.nextDeadline(state), TTL_END - 1 + settings.staleMs);
  });

  it('S4: expiry ends the meeting with empty_ttl; a later join is 会议已结束', () => {
    assert.equal(kind.nextDeadline(fold(emptied)), TTL_END);
    const state = given(emptied)
      .when(EXPIRE, { nowMs: TTL_END })
      .then([{ type: 'MeetingEnded', reason: 'empty_ttl', at_ms: TTL_END }]);
    assert.equal(state.status, 2);
    assert.equal(state.ended_reason, 'empty_ttl');
    assert.equal(kind.nextDeadline(state), null, 'an ended meeting waits for nothing');
    given(...emptied, { type: 'MeetingEnded', reason: 'empty_ttl', at_ms: TTL_END })
      .when(join('u-1'))
      .thenError('MEETING_ENDED');
  });

  it('an alarm before the deadline does nothing', () => {
    given(emptied)
      .when(EXPIRE, { nowMs: TTL_END - 1 })
      .then([]);
  });
});

describe('stale cleanup', () => {
  it('4 h without activity ends the meeting (system_error); the members still in leave', () => {
    const history = meetingWith(['u-1']);
    const at = T0 + 1 + settings.staleMs;
    assert.equal(kind.nextDeadline(fold(history)), at);
    given(history)
      .when(EXPIRE, { nowMs: at - 1 })
      .then([]);
    const state = given(history)
      .when(EXPIRE, { nowMs: at })
      .then([
        left(HOST, { reason: 'system_error', duration: Math.floor((at - T0) / 1000), at }),
        left('u-1', { reason: 'system_error', duration: Math.floor((at - T0 - 1) / 1000), at }),
        { type: 'MeetingEnded', reason: 'system_error', at_ms: at },
      ]);
    assert.equal(state.ended_reason, 'system_error');
  });

  it('any accepted command (a socket liveness notice too) postpones it; a refused one does not', () => {
    const history = meetingWith(['u-1']);
    const later = T0 + 3 * 60 * 60 * 1000;
    const touched = given(history)
      .when(live('u-1'), { nowMs: later })
      .then([socketLive('u-1', NODE_A, later)]);
    const stale = (t: ReturnType<typeof meetingTimers>) => t.find((x) => x.timer === 'stale');
    assert.equal(stale(meetingTimers(touched, settings))?.at_ms, later + settings.staleMs);
    const refused = kind.decide(fold(history), join('u-1'), ctx({ nowMs: later }));
    assert.ok(isDomainError(refused), 'an active member joining again is refused');
    assert.equal(kind.nextDeadline(fold(history)), T0 + 1 + settings.staleMs);
  });

  it('overdue timers fire earliest first: an empty TTL overdue with the stale one is empty_ttl', () => {
    const emptied: MeetingEvent[] = [...created(), left(HOST), emptyTtlStarted()];
    const late = T0 + settings.staleMs + 10;
    assert.deepEqual(
      meetingTimers(fold(emptied), settings).map((t) => t.timer),
      ['empty_ttl', 'stale'],
    );
    given(emptied)
      .when(EXPIRE, { nowMs: late })
      .then([{ type: 'MeetingEnded', reason: 'empty_ttl', at_ms: late }]);
  });

  it('a grace and the stale deadline overdue together: the grace fires, then the stale end', () => {
    const history = [...meetingWith(['u-1']), graceStarted()];
    const late = T0 + settings.staleMs + 10;
    const events = kind.decide(fold(history), EXPIRE, ctx({ nowMs: late }));
    assert.ok(!isDomainError(events));
    // A timer's own events are no activity: they do not postpone the stale end.
    assert.deepEqual(
      events.map((e) => e.type),
      ['HostGraceExpired', 'HostChanged', 'MemberLeft', 'MemberLeft', 'MeetingEnded'],
    );
    assert.equal(fold(events, fold(history)).ended_reason, 'system_error');
  });

  it('an expired grace does not count as activity', () => {
    const state = fold([...meetingWith(['u-1']), graceStarted()]);
    const events = kind.decide(state, EXPIRE, ctx({ nowMs: GRACE_END }));
    assert.ok(!isDomainError(events) && events.length === 2);
    // The last activity stays the disconnect notice that started the grace, at T0.
    assert.equal(state.last_activity_ms, T0);
    assert.equal(kind.nextDeadline(fold(events, state)), T0 + settings.staleMs);
  });
});
