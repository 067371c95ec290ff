/**
 * The Room machine of room-cell-state-machines.md: [*] → creating → active → closed, with
 * `closing` never entered by the one-commit CloseRoom; only `active` rooms accept business
 * commands. Also the guard query CheckRoomAccess, SetRoomAdmin, and the read models.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDomainError } from '../../domain/decider.js';
import { evolveVoiceRoom, initialVoiceRoom } from './evolve.js';
import { checkRoomAccess, type RoomAction } from './guards.js';
import { presentEntries } from './presence-book.js';
import {
  activeRoom,
  adminSet,
  closed,
  decide,
  fold,
  given,
  givenState,
  joined,
  kicked,
  left,
  locked,
  NOW,
  onSeat,
  OWNER,
  publishing,
  publishingOnSeat,
  released,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from './types.js';
import { replyOf, roomView } from './view.js';

/**
 * One of every business command, each valid for an active room where the owner is present,
 * u-1 is on seat 0 and u-9 is banned.
 */
const BUSINESS_COMMANDS: readonly VoiceRoomCommand[] = [
  { type: 'CloseRoom', operator_user_id: OWNER },
  { type: 'JoinRoom', user_id: 'u-2' },
  { type: 'LeaveRoom', user_id: 'u-1' },
  { type: 'RoomHeartbeat', user_id: 'u-1' },
  { type: 'KickUser', user_id: 'u-1', operator_user_id: OWNER },
  { type: 'UnbanUser', user_id: 'u-9', operator_user_id: OWNER },
  { type: 'SetRoomAdmin', user_id: 'u-1', is_admin: true, operator_user_id: OWNER },
  { type: 'SetMicSeatLock', seat_index: 3, locked: true, operator_user_id: OWNER },
  { type: 'MicUp', user_id: OWNER, seat_index: 1 },
  { type: 'MicDown', user_id: 'u-1' },
  { type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 2 },
  { type: 'ConfirmMicPublishing', user_id: 'u-1', mic_session_id: 'ms-u-1' },
  {
    type: 'SendGift',
    sender_user_id: 'u-1',
    receiver_user_ids: [OWNER],
    gift_id: 'rose',
    count: 1,
    unit_price: 10,
  },
];

/** Commands that are no-ops (never errors) outside an active room: RTC and the timer. */
const SYSTEM_COMMANDS: readonly VoiceRoomCommand[] = [
  { type: 'RtcAudioStarted', user_id: 'u-1', event_time_ms: NOW },
  { type: 'RtcAudioStopped', user_id: 'u-1', event_time_ms: NOW },
  { type: 'RtcRoomExited', user_id: 'u-1', event_time_ms: NOW },
  { type: 'ExpireDeadlines' },
];

/** An active room where every business command above would succeed. */
const busyRoom = (): VoiceRoomEvent[] => [
  ...activeRoom(),
  joined(OWNER),
  kicked('u-9'),
  ...onSeat('u-1', 0),
];

describe('Room: [*] → creating → active', () => {
  it('[*] → creating: RoomCreated makes the seats, owner and title; not yet open', () => {
    const state = evolveVoiceRoom(initialVoiceRoom(), {
      type: 'RoomCreated',
      owner_user_id: OWNER,
      title: 'Friday night',
      seat_count: 3,
      at_ms: T0,
    });
    assert.equal(state.status, 'creating');
    assert.equal(state.owner_user_id, OWNER);
    assert.equal(state.title, 'Friday night');
    assert.equal(state.created_at_ms, T0);
    assert.deepEqual(
      state.seats.map((s) => [s.seat_index, s.state, s.user_id]),
      [
        [0, 'idle', null],
        [1, 'idle', null],
        [2, 'idle', null],
      ],
    );
  });

  it('creating → active: CreateRoom persists both in one commit (title trimmed)', () => {
    const state = given()
      .when({ type: 'CreateRoom', owner_user_id: OWNER, title: '  Friday night ', seat_count: 8 })
      .then(activeRoom({ at: NOW }));
    assert.equal(state.status, 'active');
    assert.equal(state.seats.length, 8);
    assert.equal(state.closed_at_ms, null);
    assert.deepEqual(state.admins, []);
  });

  it('a room exists once: CreateRoom again is a conflict in every status', () => {
    const create: VoiceRoomCommand = {
      type: 'CreateRoom',
      owner_user_id: 'u-other',
      title: 'Mine',
      seat_count: 4,
    };
    given(activeRoom()).when(create).thenError('ROOM_ALREADY_EXISTS');
    given(activeRoom()[0]!).when(create).thenError('ROOM_ALREADY_EXISTS');
    given(activeRoom(), closed()).when(create).thenError('ROOM_ALREADY_EXISTS');
  });

  it('validates the title: 1-100 characters after trimming', () => {
    const create = (title: string): VoiceRoomCommand => ({
      type: 'CreateRoom',
      owner_user_id: OWNER,
      title,
      seat_count: 8,
    });
    for (const bad of ['', '   ', 'x'.repeat(101)]) {
      given().when(create(bad)).thenError('INVALID_ARGUMENT');
    }
    for (const good of ['x', 'x'.repeat(100), ` ${'y'.repeat(100)} `]) {
      assert.ok(Array.isArray(given().when(create(good)).result), good);
    }
  });

  it('refuses control characters and invalid UTF-16 (lone surrogates) in the title', () => {
    const create = (title: string): VoiceRoomCommand => ({
      type: 'CreateRoom',
      owner_user_id: OWNER,
      title,
      seat_count: 8,
    });
    const controls = ['a\nb', 'a\u0000b', 'tab\there', 'x\u007fy', 'x\u0085y', 'x\u001by'];
    for (const bad of controls) {
      const error = given().when(create(bad)).thenError('INVALID_ARGUMENT');
      assert.match(error.message, /control characters/, JSON.stringify(bad));
    }
    for (const bad of ['\ud800', 'room \udc00', 'cut emoji \ud83d', '\ude00\ud83d']) {
      const error = given().when(create(bad)).thenError('INVALID_ARGUMENT');
      assert.match(error.message, /UTF-16/, JSON.stringify(bad));
    }
    for (const good of ['Café 中文 😀', '\ud83d\ude00 party', ' edges are trimmed\n']) {
      const state = given()
        .when(create(good))
        .then(activeRoom({ title: good.trim(), at: NOW }));
      assert.equal(state.title, good.trim());
    }
  });

  it('validates seat_count: an integer from 1 to maxSeats', () => {
    const create = (seat_count: number): VoiceRoomCommand => ({
      type: 'CreateRoom',
      owner_user_id: OWNER,
      title: 'Room',
      seat_count,
    });
    for (const bad of [0, -1, settings.maxSeats + 1, 1.5, Number.NaN, Infinity]) {
      given().when(create(bad)).thenError('INVALID_ARGUMENT');
    }
    for (const good of [1, settings.maxSeats]) {
      given()
        .when(create(good))
        .then(activeRoom({ seats: good, title: 'Room', at: NOW }));
    }
  });
});

describe('Room: active → closed (CloseRoom, one commit)', () => {
  it('the owner closes: RoomClosed only; closing is never entered', () => {
    const state = given(activeRoom())
      .when({ type: 'CloseRoom', operator_user_id: OWNER })
      .then([closed(OWNER, NOW)]);
    assert.equal(state.status, 'closed');
    assert.equal(state.closed_at_ms, NOW);
  });

  it('an admin may close; a plain user, even present, may not', () => {
    given(activeRoom(), adminSet('u-admin'))
      .when({ type: 'CloseRoom', operator_user_id: 'u-admin' })
      .then([closed('u-admin', NOW)]);
    given(activeRoom(), joined('u-1'))
      .when({ type: 'CloseRoom', operator_user_id: 'u-1' })
      .thenError('NOT_ADMIN');
  });

  it('clears presence, releases every seat, keeps seat numbers and locks', () => {
    const state = given(
      activeRoom({ seats: 4 }),
      joined(OWNER),
      ...onSeat('u-1', 0),
      ...publishingOnSeat('u-2', 2),
      joined('u-3'),
      left('u-3'),
      kicked('u-4'),
      locked(3),
    )
      .when({ type: 'CloseRoom', operator_user_id: OWNER })
      .then([
        released('u-1', 0, 'room_closed'),
        released('u-2', 2, 'room_closed'),
        closed(OWNER, NOW),
      ]);
    // Those present are now closed_left; they, u-3 (left) and u-4 (kicked) have no entry.
    assert.deepEqual(presentEntries(state.presence), []);
    assert.deepEqual(
      state.seats.map((s) => [s.seat_index, s.state]),
      [
        [0, 'idle'],
        [1, 'idle'],
        [2, 'idle'],
        [3, 'locked'],
      ],
    );
    for (const seat of state.seats) {
      assert.deepEqual(
        [
          seat.user_id,
          seat.mic_session_id,
          seat.publish_deadline_ms,
          seat.mic_session_room_version,
        ],
        [null, null, null, null],
      );
    }
    assert.deepEqual(state.banned, ['u-4']);
    assert.equal(roomView(state, 9).online_count, 0);
  });
});

describe('Room: CloseRoom ends every mic session with its own event', () => {
  const seated = [
    ...activeRoom({ seats: 4 }),
    adminSet('u-admin'),
    ...onSeat('u-1', 0),
    ...publishingOnSeat('u-2', 3, { session: 'ms-2' }),
    locked(1),
  ];

  it('one MicReleased (room_closed) per occupied seat, in seat order, before RoomClosed', () => {
    given(seated)
      .when({ type: 'CloseRoom', operator_user_id: 'u-admin' })
      .then([
        released('u-1', 0, 'room_closed'),
        released('u-2', 3, 'room_closed', 'ms-2'),
        closed('u-admin', NOW),
      ]);
    given(activeRoom(), locked(2))
      .when({ type: 'CloseRoom', operator_user_id: OWNER })
      .then([closed(OWNER, NOW)]);
  });

  it('the released room equals the old one-event close: seats idle, numbers and locks kept', () => {
    const result = given(seated).when({ type: 'CloseRoom', operator_user_id: OWNER }).result;
    assert.ok(!isDomainError(result));
    const now = fold(result, fold(seated));
    // A log written before CloseRoom emitted releases (RoomClosed only) replays the same.
    assert.deepEqual(now, fold([closed(OWNER, NOW)], fold(seated)));
    assert.deepEqual(
      now.seats.map((s) => [s.seat_index, s.state, s.user_id]),
      [
        [0, 'idle', null],
        [1, 'locked', null],
        [2, 'idle', null],
        [3, 'idle', null],
      ],
    );
  });
});

describe('Room: only active rooms accept business commands', () => {
  it('a closed room refuses every business command with ROOM_CLOSED', () => {
    const g = given(busyRoom(), closed());
    for (const command of BUSINESS_COMMANDS) {
      assert.equal(g.when(command).thenError('ROOM_CLOSED').kind, 'illegal_state', command.type);
    }
  });

  it('a closed room takes RTC callbacks and the timer as no-ops, never as errors', () => {
    const g = given(busyRoom(), closed());
    for (const command of SYSTEM_COMMANDS) g.when(command, { nowMs: NOW + 10 * 60_000 }).then([]);
  });

  it('the same room before closing accepts every one of those commands', () => {
    const g = given(busyRoom());
    for (const command of BUSINESS_COMMANDS) {
      const result = g.when(command).result;
      assert.ok(!isDomainError(result), `${command.type}: ${JSON.stringify(result)}`);
      assert.ok(result.length > 0, command.type);
    }
  });

  it('a creating room (RoomCreated without RoomActivated) refuses with ROOM_NOT_ACTIVE', () => {
    const g = given(activeRoom()[0]!);
    assert.equal(g.state.status, 'creating');
    for (const command of BUSINESS_COMMANDS) g.when(command).thenError('ROOM_NOT_ACTIVE');
    for (const command of SYSTEM_COMMANDS) g.when(command).then([]);
  });

  it('a closing room (no event leads there: built directly) refuses with ROOM_NOT_ACTIVE', () => {
    const active = fold(busyRoom());
    const g = givenState({ ...active, status: 'closing' });
    for (const command of BUSINESS_COMMANDS) g.when(command).thenError('ROOM_NOT_ACTIVE');
    for (const command of SYSTEM_COMMANDS) g.when(command, { nowMs: NOW + 10 * 60_000 }).then([]);
  });

  it('no event ever leads to closing: CloseRoom goes straight from active to closed', () => {
    const result = given(busyRoom()).when({ type: 'CloseRoom', operator_user_id: OWNER }).result;
    assert.ok(!isDomainError(result));
    let state = fold(busyRoom());
    for (const event of result) {
      state = evolveVoiceRoom(state, event);
      assert.notEqual(state.status, 'closing');
    }
    assert.equal(state.status, 'closed');
  });

  it('a room that does not exist refuses with ROOM_NOT_FOUND', () => {
    for (const command of BUSINESS_COMMANDS) given().when(command).thenError('ROOM_NOT_FOUND');
    for (const command of SYSTEM_COMMANDS) given().when(command).then([]);
  });
});

describe('SetRoomAdmin: owner only', () => {
  it('the owner grants and revokes; repeating is a no-op', () => {
    const granted = given(activeRoom())
      .when({ type: 'SetRoomAdmin', user_id: 'u-1', is_admin: true, operator_user_id: OWNER })
      .then([adminSet('u-1')]);
    assert.deepEqual(granted.admins, ['u-1']);
    given(activeRoom(), adminSet('u-1'))
      .when({ type: 'SetRoomAdmin', user_id: 'u-1', is_admin: true, operator_user_id: OWNER })
      .then([]);
    const revoked = given(activeRoom(), adminSet('u-1'))
      .when({ type: 'SetRoomAdmin', user_id: 'u-1', is_admin: false, operator_user_id: OWNER })
      .then([adminSet('u-1', false)]);
    assert.deepEqual(revoked.admins, []);
    given(activeRoom())
      .when({ type: 'SetRoomAdmin', user_id: 'u-1', is_admin: false, operator_user_id: OWNER })
      .then([]);
  });

  it('an admin or a plain user cannot; the owner cannot target themselves', () => {
    given(activeRoom(), adminSet('u-admin'))
      .when({ type: 'SetRoomAdmin', user_id: 'u-1', is_admin: true, operator_user_id: 'u-admin' })
      .thenError('NOT_OWNER');
    given(activeRoom(), joined('u-1'))
      .when({ type: 'SetRoomAdmin', user_id: 'u-1', is_admin: true, operator_user_id: 'u-1' })
      .thenError('NOT_OWNER');
    given(activeRoom())
      .when({ type: 'SetRoomAdmin', user_id: OWNER, is_admin: false, operator_user_id: OWNER })
      .thenError('CANNOT_TARGET_SELF');
  });

  it('a revoked admin loses the management commands', () => {
    const g = given(activeRoom(), adminSet('u-admin'), adminSet('u-admin', false));
    g.when({ type: 'CloseRoom', operator_user_id: 'u-admin' }).thenError('NOT_ADMIN');
    g.when({
      type: 'SetMicSeatLock',
      seat_index: 0,
      locked: true,
      operator_user_id: 'u-admin',
    }).thenError('NOT_ADMIN');
  });
});

describe('checkRoomAccess (guard query)', () => {
  const ACTIONS: readonly RoomAction[] = ['join', 'view', 'speak', 'gift', 'manage'];
  const code = (state: VoiceRoomState, user: string, action: RoomAction) =>
    checkRoomAccess(state, user, action)?.code ?? null;

  it('refuses every action in a closed room, even for the owner who was present', () => {
    const state = fold([...activeRoom(), joined(OWNER), joined('u-1'), closed()]);
    for (const action of ACTIONS) {
      assert.equal(code(state, OWNER, action), 'ROOM_CLOSED');
      assert.equal(code(state, 'u-1', action), 'ROOM_CLOSED');
    }
  });

  it('refuses rooms that do not exist or are not active yet / any more', () => {
    const creating = fold([activeRoom()[0]!]);
    const closing: VoiceRoomState = { ...fold(activeRoom()), status: 'closing' };
    for (const action of ACTIONS) {
      assert.equal(code(initialVoiceRoom(), OWNER, action), 'ROOM_NOT_FOUND');
      assert.equal(code(creating, OWNER, action), 'ROOM_NOT_ACTIVE');
      assert.equal(code(closing, OWNER, action), 'ROOM_NOT_ACTIVE');
    }
  });

  it('refuses banned users, even for joining', () => {
    const state = fold([...activeRoom(), joined('u-1'), kicked('u-1')]);
    for (const action of ACTIONS) assert.equal(code(state, 'u-1', action), 'USER_BANNED');
  });

  it('lets anyone not banned join; everything else needs presence', () => {
    const state = fold([...activeRoom(), joined('u-1'), joined('u-2'), left('u-2')]);
    for (const user of ['u-new', 'u-2']) {
      assert.equal(code(state, user, 'join'), null);
      for (const action of ['view', 'speak', 'gift', 'manage'] as const) {
        assert.equal(code(state, user, action), 'NOT_IN_ROOM', `${user} ${action}`);
      }
    }
    for (const action of ['join', 'view', 'speak', 'gift'] as const) {
      assert.equal(code(state, 'u-1', action), null);
    }
  });

  it('manage needs a present owner or admin', () => {
    const state = fold([...activeRoom(), adminSet('u-admin'), joined('u-admin'), joined('u-1')]);
    assert.equal(code(state, 'u-1', 'manage'), 'NOT_ADMIN');
    assert.equal(code(state, 'u-admin', 'manage'), null);
    assert.equal(code(state, OWNER, 'manage'), 'NOT_IN_ROOM');
    assert.equal(code(fold([joined(OWNER)], state), OWNER, 'manage'), null);
  });
});

describe('roomView and replyOf', () => {
  it('shows present members only, seats, admins, bans and the version', () => {
    const state = fold([
      ...activeRoom({ seats: 2 }),
      adminSet('u-admin'),
      joined('u-1', T0 + 5),
      ...onSeat('u-2', 1, { at: T0 + 7 }),
      joined('u-3'),
      left('u-3'),
      kicked('u-4'),
      locked(0),
    ]);
    assert.deepEqual(roomView(state, 12), {
      status: 'active',
      room_version: 12,
      owner_user_id: OWNER,
      title: 'Friday night',
      announcement: '',
      seat_mode: 'free',
      seat_application_count: 0,
      mic_muted: [],
      seat_invitations: [],
      created_at_ms: T0,
      closed_at_ms: null,
      admins: ['u-admin'],
      banned: ['u-4'],
      online_count: 2,
      members: [
        { user_id: 'u-1', joined_at_ms: T0 + 5, last_seen_at_ms: T0 + 5 },
        { user_id: 'u-2', joined_at_ms: T0 + 7, last_seen_at_ms: T0 + 7 },
      ],
      seats: [
        {
          seat_index: 0,
          state: 'locked',
          user_id: null,
          mic_session_id: null,
          publish_deadline_ms: null,
          muted: false,
        },
        {
          seat_index: 1,
          state: 'pending_publish',
          user_id: 'u-2',
          mic_session_id: 'ms-u-2',
          publish_deadline_ms: T0 + 7 + settings.publishTimeoutMs,
          muted: false,
        },
      ],
    });
  });

  it('an empty (absent) room has an empty view', () => {
    const view = roomView(initialVoiceRoom(), 0);
    assert.equal(view.status, 'absent');
    assert.deepEqual([view.members, view.seats, view.online_count], [[], [], 0]);
  });

  it('mic commands answer with the seat; gifts with their price; the rest with the status', () => {
    const events: VoiceRoomEvent[] = [...activeRoom(), ...onSeat('u-1', 3), joined('u-2')];
    const state = fold(events);
    const seatReply = {
      seat_index: 3,
      state: 'pending_publish',
      mic_session_id: 'ms-u-1',
      publish_deadline_ms: T0 + settings.publishTimeoutMs,
    };
    assert.deepEqual(
      replyOf(state, { type: 'MicUp', user_id: 'u-1', seat_index: 3 }, []),
      seatReply,
    );
    assert.deepEqual(
      replyOf(state, { type: 'ChangeMicSeat', user_id: 'u-1', seat_index: 3 }, []),
      seatReply,
    );
    const confirmed = fold([publishing('u-1', 3, { source: 'client' })], state);
    assert.deepEqual(
      replyOf(
        confirmed,
        { type: 'ConfirmMicPublishing', user_id: 'u-1', mic_session_id: 'ms-u-1' },
        [],
      ),
      { ...seatReply, state: 'publishing', publish_deadline_ms: null },
    );
    assert.deepEqual(replyOf(state, { type: 'MicUp', user_id: 'u-2', seat_index: 0 }, []), {});
    const gift: VoiceRoomCommand = {
      type: 'SendGift',
      sender_user_id: 'u-2',
      receiver_user_ids: ['u-1'],
      gift_id: 'rose',
      count: 3,
      unit_price: 5,
    };
    const sent = decide(state, gift);
    assert.ok(!isDomainError(sent));
    assert.deepEqual(replyOf(state, gift, sent), { gift_id: 'rose', count: 3, total_price: 15 });
    assert.deepEqual(replyOf(state, gift, []), {});
    assert.deepEqual(replyOf(state, { type: 'JoinRoom', user_id: 'u-3' }, []), {
      status: 'active',
    });
    const closedState = fold([closed()], state);
    assert.deepEqual(replyOf(closedState, { type: 'CloseRoom', operator_user_id: OWNER }, []), {
      status: 'closed',
    });
  });
});
