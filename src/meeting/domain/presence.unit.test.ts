/**
 * The host grace judged across nodes: each node holds a presence lease per user (refreshed
 * by MarkSocketLive, dropped by MarkSocketsGone, ended by the timer when no refresh came),
 * and the host's grace starts only when the host's last lease on any node is gone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDomainError } from '../../domain/decider.js';
import { meetingKind } from './domain.js';
import { presenceOf, presenceOfUser } from './evolve.js';
import {
  ctx,
  EXPIRE,
  fold,
  given,
  givenState,
  gone,
  graceStarted,
  HOST,
  hostChanged,
  left,
  live,
  meetingWith,
  NODE_A,
  NODE_B,
  NOW,
  presenceExpired,
  settings,
  socketLive,
  socketsGone,
  T0,
} from './testing/given-when-then.js';
import type { MeetingEvent, MeetingState } from './types.js';

const kind = meetingKind(settings);
const { presenceTtlMs: TTL, hostGraceMs: GRACE } = settings;
/** The host and u-1 in the meeting, the host live on node A and node B since T0. */
const onTwoNodes = (): MeetingEvent[] => [
  ...meetingWith(['u-1']),
  socketLive(HOST, NODE_A),
  socketLive(HOST, NODE_B),
];
const graceFromExpiry = (expiredAt: number, at: number): MeetingEvent => ({
  type: 'HostGraceStarted',
  user_id: HOST,
  deadline_ms: expiredAt + GRACE,
  cause: 'presence_expired',
  at_ms: at,
});

describe('host presence across nodes', () => {
  it('the host’s sockets gone on node A while node B still has one: no grace', () => {
    const state = given(onTwoNodes())
      .when(gone(HOST, NODE_A))
      .then([socketsGone(HOST, NODE_A)]);
    assert.equal(state.host_grace, null);
    assert.deepEqual(
      presenceOfUser(state, HOST).map((e) => e.node_id),
      [NODE_B],
    );
    // A retry of the same notice, or one from a node that had nothing, changes nothing.
    given(onTwoNodes(), socketsGone(HOST, NODE_A)).when(gone(HOST, NODE_A)).then([]);
    given(onTwoNodes()).when(gone(HOST, 'node-c')).then([]);
  });

  it('then node B’s gone too: the grace starts', () => {
    const state = given(onTwoNodes(), socketsGone(HOST, NODE_A))
      .when(gone(HOST, NODE_B))
      .then([socketsGone(HOST, NODE_B), graceStarted(HOST, NOW)]);
    assert.deepEqual(presenceOf(state), []);
    assert.equal(kind.nextDeadline(state), NOW + GRACE);
  });

  it('the host’s only lease expiring starts the grace at the expiry; its end moves the host', () => {
    const history = [...meetingWith(['u-1']), socketLive(HOST, NODE_A)];
    const expiry = T0 + TTL;
    assert.equal(kind.nextDeadline(fold(history)), expiry, 'the lease is the next alarm');
    given(history)
      .when(EXPIRE, { nowMs: expiry - 1 })
      .then([]);
    // The alarm fired a little late: the grace still counts from the expiry.
    const late = expiry + 200;
    const state = given(history)
      .when(EXPIRE, { nowMs: late })
      .then([presenceExpired(HOST, NODE_A, late), graceFromExpiry(expiry, late)]);
    assert.equal(kind.nextDeadline(state), expiry + GRACE);
    assert.deepEqual(kind.decide(state, EXPIRE, ctx({ nowMs: late })), [], 'fires once');
    given(...history, presenceExpired(HOST, NODE_A, late), graceFromExpiry(expiry, late))
      .when(EXPIRE, { nowMs: expiry + GRACE })
      .then([
        { type: 'HostGraceExpired', user_id: HOST, at_ms: expiry + GRACE },
        hostChanged(HOST, 'u-1', 'host_grace_expired', expiry + GRACE),
      ]);
  });

  it('an alarm woken long after the expiry (its owner died) expires the lease and the grace at once', () => {
    const history = [...meetingWith(['u-1']), socketLive(HOST, NODE_A)];
    const expiry = T0 + TTL;
    const woken = expiry + GRACE + 5_000;
    given(history)
      .when(EXPIRE, { nowMs: woken })
      .then([
        presenceExpired(HOST, NODE_A, woken),
        graceFromExpiry(expiry, woken),
        { type: 'HostGraceExpired', user_id: HOST, at_ms: woken },
        hostChanged(HOST, 'u-1', 'host_grace_expired', woken),
      ]);
  });

  it('one node’s lease expiring while another node refreshes: no grace', () => {
    const history = [
      ...meetingWith(['u-1']),
      socketLive(HOST, NODE_A, T0),
      socketLive(HOST, NODE_B, T0 + 5_000),
    ];
    const state = given(history)
      .when(EXPIRE, { nowMs: T0 + TTL })
      .then([presenceExpired(HOST, NODE_A, T0 + TTL)]);
    assert.equal(state.host_grace, null);
    assert.equal(kind.nextDeadline(state), T0 + 5_000 + TTL);
  });

  it('a refresh moves the lease: the first expiry no longer fires', () => {
    const history = [...meetingWith(['u-1']), socketLive(HOST, NODE_A, T0)];
    const refreshed = given(history)
      .when(live(HOST, NODE_A), { nowMs: T0 + 3_000 })
      .then([socketLive(HOST, NODE_A, T0 + 3_000)]);
    assert.equal(presenceOf(refreshed).length, 1, 'one entry per (user, node)');
    assert.equal(kind.nextDeadline(refreshed), T0 + 3_000 + TTL);
    assert.deepEqual(kind.decide(refreshed, EXPIRE, ctx({ nowMs: T0 + TTL })), []);
  });

  it('a live notice from any node cancels the grace, whichever node started it', () => {
    const inGrace = [...onTwoNodes(), socketsGone(HOST, NODE_A), socketsGone(HOST, NODE_B)];
    for (const node of [NODE_A, NODE_B, 'node-c']) {
      const state = given(inGrace, graceStarted(HOST, NOW))
        .when(live(HOST, node), { nowMs: NOW + 1 })
        .then([
          socketLive(HOST, node, NOW + 1),
          { type: 'HostGraceCancelled', user_id: HOST, at_ms: NOW + 1 },
        ]);
      assert.equal(state.host_grace, null);
    }
    const expiry = T0 + TTL;
    const lapsed = [...meetingWith(['u-1']), socketLive(HOST, NODE_A)];
    given(lapsed, presenceExpired(HOST, NODE_A, expiry), graceFromExpiry(expiry, expiry))
      .when(live(HOST, NODE_B), { nowMs: expiry + 1 })
      .then([
        socketLive(HOST, NODE_B, expiry + 1),
        { type: 'HostGraceCancelled', user_id: HOST, at_ms: expiry + 1 },
      ]);
  });

  it('a member’s leases come and go without any grace', () => {
    const history = [...meetingWith(['u-1']), socketLive('u-1', NODE_A)];
    given(history)
      .when(gone('u-1', NODE_A))
      .then([socketsGone('u-1', NODE_A)]);
    given(history)
      .when(EXPIRE, { nowMs: T0 + TTL })
      .then([presenceExpired('u-1', NODE_A, T0 + TTL)]);
  });

  it('leaving, a kick and the end clear the user’s leases', () => {
    const history = [...onTwoNodes(), socketLive('u-1', NODE_A)];
    const hostLeft = given(history)
      .when({ type: 'LeaveMeeting', user_id: HOST })
      .then([
        left(HOST, { duration: 1, at: NOW }),
        hostChanged(HOST, 'u-1', 'host_left_with_members'),
      ]);
    assert.deepEqual(
      presenceOf(hostLeft).map((e) => e.user_id),
      ['u-1'],
    );
    const kicked = fold([left('u-1', { reason: 'kicked', by: HOST, at: NOW })], fold(history));
    assert.deepEqual(presenceOfUser(kicked, 'u-1'), []);
    const ended = kind.decide(fold(history), { type: 'EndMeeting', operator_user_id: HOST }, ctx());
    assert.ok(!isDomainError(ended));
    const after = fold(ended, fold(history));
    assert.deepEqual(presenceOf(after), []);
    assert.equal(kind.nextDeadline(after), null);
    // A notice arriving after the end changes nothing.
    given(...history, ...ended)
      .when(gone(HOST, NODE_B))
      .then([]);
  });

  it('an expired lease is no activity: the stale deadline stays', () => {
    const state = fold([...meetingWith(['u-1']), socketLive(HOST, NODE_A)]);
    const events = kind.decide(state, EXPIRE, ctx({ nowMs: T0 + TTL }));
    assert.ok(!isDomainError(events) && events.length === 2);
    assert.equal(fold(events, state).last_activity_ms, T0);
  });

  it('a malformed node id is refused and changes nothing', () => {
    given(onTwoNodes()).when(gone(HOST, '')).thenError('INVALID_ARGUMENT');
    given(onTwoNodes())
      .when(gone(HOST, 'n'.repeat(65)))
      .thenError('INVALID_ARGUMENT');
  });

  it('a state saved before presence was kept: a gone notice still starts the grace; old SocketLive events replay', () => {
    const { presence: _none, ...saved } = fold(meetingWith(['u-1']));
    const old = saved as MeetingState;
    assert.equal(old.presence, undefined);
    givenState(old)
      .when(gone(HOST, NODE_A))
      .then([graceStarted(HOST, NOW)]);
    const replayed = fold([
      ...meetingWith(['u-1']),
      { type: 'SocketLive', user_id: HOST, at_ms: T0 + 5 },
    ]);
    assert.deepEqual(presenceOf(replayed), []);
    assert.equal(replayed.last_activity_ms, T0 + 5);
  });
});
