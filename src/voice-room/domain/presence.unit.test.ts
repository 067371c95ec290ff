/**
 * The Presence machine of room-cell-state-machines.md: every arrow, the rules (heartbeat
 * never creates presence, LeaveRoom frees the seat, KickUser bans until UnbanUser), the
 * kick/unban permissions, and a `__proto__` user id behaving like any other.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { presenceOf } from './evolve.js';
import { presentCount, presentUserIds } from './presence-book.js';
import { roomView } from './view.js';
import {
  activeRoom,
  adminSet,
  closed,
  fold,
  given,
  joined,
  kicked,
  left,
  NOW,
  onSeat,
  OWNER,
  publishingOnSeat,
  released,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { VoiceRoomEvent, VoiceRoomState } from './types.js';

const stateOf = (state: VoiceRoomState, user: string) => presenceOf(state, user)?.state;
/**
 * A user in `left`, `stale_left`, `kicked` or `closed_left` has no entry, like one who never
 * came: nothing tells those states apart (types.ts, VoiceRoomState.presence); the event that
 * ended the presence says which it was.
 */
const GONE = undefined;
const stale = (user_id: string, at: number): VoiceRoomEvent => ({
  type: 'PresenceStale',
  user_id,
  at_ms: at,
});
const STALE_AT = T0 + settings.presenceTimeoutMs;

describe('Presence arrows', () => {
  it('absent → present: JoinRoom', () => {
    const state = given(activeRoom())
      .when({ type: 'JoinRoom', user_id: 'u-1' })
      .then([joined('u-1', NOW)]);
    assert.deepEqual(presenceOf(state, 'u-1'), {
      state: 'present',
      joined_at_ms: NOW,
      last_seen_at_ms: NOW,
    });
  });

  it('present → present: a JoinRoom retry refreshes last_seen_at_ms, keeps joined_at_ms', () => {
    const state = given(activeRoom(), joined('u-1'))
      .when({ type: 'JoinRoom', user_id: 'u-1' })
      .then([{ type: 'PresenceRefreshed', user_id: 'u-1', at_ms: NOW }]);
    assert.deepEqual(presenceOf(state, 'u-1'), {
      state: 'present',
      joined_at_ms: T0,
      last_seen_at_ms: NOW,
    });
  });

  it('present → present: RoomHeartbeat refreshes last_seen_at_ms', () => {
    const state = given(activeRoom(), joined('u-1'))
      .when({ type: 'RoomHeartbeat', user_id: 'u-1' }, { nowMs: T0 + 30_000 })
      .then([{ type: 'PresenceRefreshed', user_id: 'u-1', at_ms: T0 + 30_000 }]);
    assert.deepEqual(presenceOf(state, 'u-1'), {
      state: 'present',
      joined_at_ms: T0,
      last_seen_at_ms: T0 + 30_000,
    });
  });

  it('present → left: LeaveRoom', () => {
    const state = given(activeRoom(), joined('u-1'))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([left('u-1', NOW)]);
    assert.equal(stateOf(state, 'u-1'), GONE);
    assert.equal(roomView(state, 1).online_count, 0);
  });

  it('present → stale_left: the timer expires a presence without heartbeat', () => {
    const g = given(activeRoom(), joined('u-1'), joined('u-2', T0 + 10_000));
    g.when({ type: 'ExpireDeadlines' }, { nowMs: STALE_AT - 1 }).then([]);
    const state = g
      .when({ type: 'ExpireDeadlines' }, { nowMs: STALE_AT })
      .then([stale('u-1', STALE_AT)]);
    assert.equal(stateOf(state, 'u-1'), GONE);
    assert.equal(stateOf(state, 'u-2'), 'present');
  });

  it('a heartbeat pushes the stale deadline back', () => {
    given(activeRoom(), joined('u-1'), {
      type: 'PresenceRefreshed',
      user_id: 'u-1',
      at_ms: T0 + 30_000,
    })
      .when({ type: 'ExpireDeadlines' }, { nowMs: STALE_AT })
      .then([]);
  });

  it('present → kicked: KickUser bans the user', () => {
    const state = given(activeRoom(), joined('u-1'))
      .when({ type: 'KickUser', user_id: 'u-1', operator_user_id: OWNER })
      .then([kicked('u-1')]);
    assert.equal(stateOf(state, 'u-1'), GONE);
    assert.deepEqual(state.banned, ['u-1']);
  });

  it('present → closed_left: CloseRoom', () => {
    const state = given(activeRoom(), joined('u-1'))
      .when({ type: 'CloseRoom', operator_user_id: OWNER })
      .then([closed(OWNER, NOW)]);
    assert.equal(stateOf(state, 'u-1'), GONE);
    assert.equal(presentCount(state.presence), 0);
  });

  it('left → present and stale_left → present: JoinRoom starts a new presence', () => {
    for (const gone of [left('u-1', T0 + 5), stale('u-1', T0 + 5)]) {
      const state = given(activeRoom(), joined('u-1'), gone)
        .when({ type: 'JoinRoom', user_id: 'u-1' })
        .then([joined('u-1', NOW)]);
      assert.deepEqual(presenceOf(state, 'u-1'), {
        state: 'present',
        joined_at_ms: NOW,
        last_seen_at_ms: NOW,
      });
    }
  });

  it('kicked → present only after UnbanUser', () => {
    const g = given(activeRoom(), joined('u-1'), kicked('u-1'));
    g.when({ type: 'JoinRoom', user_id: 'u-1' }).thenError('USER_BANNED');
    const unbanned = g
      .when({ type: 'UnbanUser', user_id: 'u-1', operator_user_id: OWNER })
      .then([{ type: 'UserUnbanned', user_id: 'u-1', operator_user_id: OWNER }]);
    assert.deepEqual(unbanned.banned, []);
    assert.equal(stateOf(unbanned, 'u-1'), GONE, 'unbanning does not bring them back');
    const back = given(activeRoom(), joined('u-1'), kicked('u-1'), {
      type: 'UserUnbanned',
      user_id: 'u-1',
      operator_user_id: OWNER,
    })
      .when({ type: 'JoinRoom', user_id: 'u-1' })
      .then([joined('u-1', NOW)]);
    assert.equal(stateOf(back, 'u-1'), 'present');
  });

  it('closed_left is final: the closed room refuses the JoinRoom', () => {
    given(activeRoom(), joined('u-1'), closed())
      .when({ type: 'JoinRoom', user_id: 'u-1' })
      .thenError('ROOM_CLOSED');
  });
});

describe('Presence rules', () => {
  it('RoomHeartbeat never creates presence: absent, left, stale_left, kicked', () => {
    given(activeRoom()).when({ type: 'RoomHeartbeat', user_id: 'u-1' }).thenError('NOT_IN_ROOM');
    for (const gone of [left('u-1'), stale('u-1', T0), kicked('u-1')]) {
      given(activeRoom(), joined('u-1'), gone)
        .when({ type: 'RoomHeartbeat', user_id: 'u-1' })
        .thenError('NOT_IN_ROOM');
    }
  });

  it('LeaveRoom frees the seat (pending or publishing) before leaving', () => {
    given(activeRoom(), ...onSeat('u-1', 2))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([released('u-1', 2, 'leave'), left('u-1', NOW)]);
    const state = given(activeRoom(), ...publishingOnSeat('u-1', 5))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .then([released('u-1', 5, 'leave'), left('u-1', NOW)]);
    assert.equal(state.seats[5]!.state, 'idle');
    assert.equal(state.seats[5]!.user_id, null);
  });

  it('LeaveRoom needs a present user', () => {
    given(activeRoom()).when({ type: 'LeaveRoom', user_id: 'u-1' }).thenError('NOT_IN_ROOM');
    given(activeRoom(), joined('u-1'), left('u-1'))
      .when({ type: 'LeaveRoom', user_id: 'u-1' })
      .thenError('NOT_IN_ROOM');
  });

  it('going stale frees the seat too', () => {
    const state = given(activeRoom(), ...publishingOnSeat('u-1', 1))
      .when({ type: 'ExpireDeadlines' }, { nowMs: STALE_AT })
      .then([released('u-1', 1, 'stale'), stale('u-1', STALE_AT)]);
    assert.equal(state.seats[1]!.user_id, null);
  });

  it('KickUser frees the seat and bans', () => {
    const state = given(activeRoom(), ...onSeat('u-1', 0))
      .when({ type: 'KickUser', user_id: 'u-1', operator_user_id: OWNER })
      .then([released('u-1', 0, 'kicked'), kicked('u-1')]);
    assert.equal(state.seats[0]!.user_id, null);
  });

  it('KickUser of someone not in the room bans them in advance', () => {
    const state = given(activeRoom())
      .when({ type: 'KickUser', user_id: 'u-1', operator_user_id: OWNER })
      .then([kicked('u-1')]);
    assert.equal(presenceOf(state, 'u-1'), undefined);
    given(activeRoom(), kicked('u-1'))
      .when({ type: 'JoinRoom', user_id: 'u-1' })
      .thenError('USER_BANNED');
  });

  it('kicking a banned user who is not present is a no-op', () => {
    given(activeRoom(), joined('u-1'), kicked('u-1'))
      .when({ type: 'KickUser', user_id: 'u-1', operator_user_id: OWNER })
      .then([]);
  });

  it('UnbanUser of someone not banned is refused', () => {
    given(activeRoom(), joined('u-1'))
      .when({ type: 'UnbanUser', user_id: 'u-1', operator_user_id: OWNER })
      .thenError('NOT_BANNED');
  });
});

describe('Kick and unban permissions', () => {
  const room = [...activeRoom(), adminSet('u-admin'), adminSet('u-admin2'), joined('u-1')];

  it('owner and admins kick plain users; plain users kick nobody', () => {
    given(room)
      .when({ type: 'KickUser', user_id: 'u-1', operator_user_id: 'u-admin' })
      .then([kicked('u-1', 'u-admin')]);
    given(room, joined('u-2'))
      .when({ type: 'KickUser', user_id: 'u-2', operator_user_id: 'u-1' })
      .thenError('NOT_ADMIN');
  });

  it('nobody kicks the owner; admins cannot kick admins; the owner can', () => {
    given(room, joined(OWNER))
      .when({ type: 'KickUser', user_id: OWNER, operator_user_id: 'u-admin' })
      .thenError('CANNOT_KICK_OWNER');
    given(room, joined('u-admin2'))
      .when({ type: 'KickUser', user_id: 'u-admin2', operator_user_id: 'u-admin' })
      .thenError('NOT_OWNER');
    given(room, joined('u-admin2'))
      .when({ type: 'KickUser', user_id: 'u-admin2', operator_user_id: OWNER })
      .then([kicked('u-admin2')]);
  });

  it('nobody kicks themselves', () => {
    given(room)
      .when({ type: 'KickUser', user_id: OWNER, operator_user_id: OWNER })
      .thenError('CANNOT_TARGET_SELF');
    given(room)
      .when({ type: 'KickUser', user_id: 'u-admin', operator_user_id: 'u-admin' })
      .thenError('CANNOT_TARGET_SELF');
  });

  it('owner and admins unban; plain users cannot', () => {
    const g = given(room, kicked('u-2'));
    g.when({ type: 'UnbanUser', user_id: 'u-2', operator_user_id: 'u-admin' }).then([
      { type: 'UserUnbanned', user_id: 'u-2', operator_user_id: 'u-admin' },
    ]);
    g.when({ type: 'UnbanUser', user_id: 'u-2', operator_user_id: 'u-1' }).thenError('NOT_ADMIN');
  });

  it('an admin kicked by the owner cannot unban themselves or manage the room', () => {
    const g = given(room, joined('u-admin2'), kicked('u-admin2'));
    g.when({ type: 'UnbanUser', user_id: 'u-admin2', operator_user_id: 'u-admin2' }).thenError(
      'NOT_ADMIN',
    );
    g.when({ type: 'CloseRoom', operator_user_id: 'u-admin2' }).thenError('NOT_ADMIN');
    g.when({ type: 'KickUser', user_id: 'u-1', operator_user_id: 'u-admin2' }).thenError(
      'NOT_ADMIN',
    );
    // Once the owner unbans them, the admin role they still hold applies again.
    given(room, kicked('u-admin2'), {
      type: 'UserUnbanned',
      user_id: 'u-admin2',
      operator_user_id: OWNER,
    })
      .when({ type: 'CloseRoom', operator_user_id: 'u-admin2' })
      .then([closed('u-admin2', NOW)]);
  });
});

describe('a `__proto__` user id is an ordinary id', () => {
  const PROTO = '__proto__';

  it('joins, heartbeats, leaves, rejoins, is kicked and unbanned like anyone', () => {
    let state = given(activeRoom())
      .when({ type: 'JoinRoom', user_id: PROTO })
      .then([joined(PROTO, NOW)]);
    assert.deepEqual(presentUserIds(state.presence), [PROTO]);
    assert.equal(Object.getPrototypeOf(state.presence), Object.prototype);
    assert.equal(stateOf(state, PROTO), 'present');
    assert.deepEqual(roomView(state, 1).members, [
      { user_id: PROTO, joined_at_ms: NOW, last_seen_at_ms: NOW },
    ]);

    const events: VoiceRoomEvent[] = [...activeRoom(), joined(PROTO, NOW)];
    state = given(events)
      .when({ type: 'RoomHeartbeat', user_id: PROTO }, { nowMs: NOW + 5 })
      .then([{ type: 'PresenceRefreshed', user_id: PROTO, at_ms: NOW + 5 }]);
    assert.equal(presenceOf(state, PROTO)?.last_seen_at_ms, NOW + 5);

    given(events)
      .when({ type: 'MicUp', user_id: PROTO, seat_index: 1 }, { version: 7 })
      .then([
        {
          type: 'MicTakenUp',
          user_id: PROTO,
          seat_index: 1,
          mic_session_id: 'ms-7',
          mic_session_room_version: 7,
          publish_deadline_ms: NOW + settings.publishTimeoutMs,
          at_ms: NOW,
        },
      ]);

    state = given(events)
      .when({ type: 'LeaveRoom', user_id: PROTO })
      .then([left(PROTO, NOW)]);
    assert.equal(stateOf(state, PROTO), GONE);
    given(events, left(PROTO))
      .when({ type: 'JoinRoom', user_id: PROTO })
      .then([joined(PROTO, NOW)]);

    state = given(events)
      .when({ type: 'KickUser', user_id: PROTO, operator_user_id: OWNER })
      .then([kicked(PROTO)]);
    assert.deepEqual(state.banned, [PROTO]);
    given(events, kicked(PROTO))
      .when({ type: 'JoinRoom', user_id: PROTO })
      .thenError('USER_BANNED');
    given(events, kicked(PROTO))
      .when({ type: 'UnbanUser', user_id: PROTO, operator_user_id: OWNER })
      .then([{ type: 'UserUnbanned', user_id: PROTO, operator_user_id: OWNER }]);
  });

  it('is never present before joining, and survives a JSON snapshot round trip', () => {
    given(activeRoom()).when({ type: 'RoomHeartbeat', user_id: PROTO }).thenError('NOT_IN_ROOM');
    given(activeRoom()).when({ type: 'LeaveRoom', user_id: PROTO }).thenError('NOT_IN_ROOM');
    const state = fold([...activeRoom(), joined(PROTO), joined('u-1')]);
    const snapshot = JSON.parse(JSON.stringify(state)) as VoiceRoomState;
    assert.deepEqual(snapshot, state);
    assert.equal(stateOf(snapshot, PROTO), 'present');
    assert.equal(Object.getPrototypeOf(snapshot.presence), Object.prototype);
    const after = fold([closed()], snapshot);
    assert.equal(stateOf(after, PROTO), GONE);
  });

  it('kicked before ever joining: banned, and no presence appears', () => {
    const state = given(activeRoom())
      .when({ type: 'KickUser', user_id: PROTO, operator_user_id: OWNER })
      .then([kicked(PROTO)]);
    assert.equal(presenceOf(state, PROTO), undefined);
    assert.deepEqual(presentUserIds(state.presence), []);
    assert.deepEqual(state.banned, [PROTO]);
    const stillAbsent = fold([left(PROTO), stale(PROTO, NOW)], state);
    assert.deepEqual(presentUserIds(stillAbsent.presence), [], 'no event invents a presence');
  });

  it('names of Object.prototype members are not mistaken for present users', () => {
    for (const user of ['constructor', 'toString', 'hasOwnProperty']) {
      given(activeRoom()).when({ type: 'RoomHeartbeat', user_id: user }).thenError('NOT_IN_ROOM');
      given(activeRoom())
        .when({ type: 'JoinRoom', user_id: user })
        .then([joined(user, NOW)]);
    }
  });
});
