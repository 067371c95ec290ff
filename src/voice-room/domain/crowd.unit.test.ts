/**
 * The crowd of a voice room (./crowd.ts): past the announced audience size, a plain
 * member's join, leave or stale presence carries `in_crowd` and the count after it; the
 * owner, admins and seat holders never do; below the size, and with the size 0, nothing is
 * marked. The marks change no state: a room folds to the same state with or without them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideVoiceRoom } from './decide.js';
import { evolveVoiceRoom } from './evolve.js';
import {
  activeRoom,
  adminSet,
  ctx,
  fold,
  joined,
  NOW,
  onSeat,
  OWNER,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomSettings } from './types.js';

const CROWD_OF_3: VoiceRoomSettings = { ...settings, announcedAudience: 3 };

function decide(events: VoiceRoomEvent[], command: VoiceRoomCommand, at = NOW, s = CROWD_OF_3) {
  const result = decideVoiceRoom(fold(events), command, ctx({ nowMs: at }), s);
  assert.ok(Array.isArray(result), `refused: ${JSON.stringify(result)}`);
  return result;
}
const join = (user_id: string): VoiceRoomCommand => ({ type: 'JoinRoom', user_id });
const leave = (user_id: string): VoiceRoomCommand => ({ type: 'LeaveRoom', user_id });
const present = (...users: string[]) => [...activeRoom(), ...users.map((u) => joined(u))];

void describe('the crowd of a voice room', () => {
  void it('marks a plain join only once the room has more than the announced size', () => {
    assert.deepEqual(decide(present(OWNER, 'a'), join('b')), [
      { type: 'UserJoined', user_id: 'b', at_ms: NOW },
    ]);
    assert.deepEqual(decide(present(OWNER, 'a', 'b'), join('c')), [
      { type: 'UserJoined', user_id: 'c', at_ms: NOW, in_crowd: true, online_count: 4 },
    ]);
  });

  void it('never marks the owner, an admin or a seat holder', () => {
    const crowd = present('a', 'b', 'c', 'd');
    assert.deepEqual(decide(crowd, join(OWNER)), [
      { type: 'UserJoined', user_id: OWNER, at_ms: NOW },
    ]);
    assert.deepEqual(decide([...crowd, adminSet('x')], join('x')), [
      { type: 'UserJoined', user_id: 'x', at_ms: NOW },
    ]);
    const seated = [...present(OWNER, 'a', 'b', 'c', 'd'), ...onSeat('a', 0)];
    const left = decide(seated, leave('a'));
    assert.equal(left.at(-1)?.type, 'UserLeft');
    assert.ok(!('in_crowd' in left.at(-1)!), 'a seat holder’s leave is announced');
  });

  void it('marks a plain leave while the room had more than the announced size', () => {
    assert.deepEqual(decide(present(OWNER, 'a', 'b', 'c'), leave('c')), [
      { type: 'UserLeft', user_id: 'c', at_ms: NOW, in_crowd: true, online_count: 3 },
    ]);
    assert.deepEqual(decide(present(OWNER, 'a', 'b'), leave('b')), [
      { type: 'UserLeft', user_id: 'b', at_ms: NOW },
    ]);
  });

  void it('counts down through stale presences expired together', () => {
    const late = T0 + settings.presenceTimeoutMs + 1;
    const events = [
      ...activeRoom(),
      ...['a', 'b', 'c', 'd', 'e'].map((u) => joined(u, T0)),
      joined(OWNER, late - 10),
    ];
    const stale = decide(events, { type: 'ExpireDeadlines' }, late).filter(
      (e) => e.type === 'PresenceStale',
    );
    assert.deepEqual(
      stale.map((e) => ('online_count' in e ? e.online_count : null)),
      [5, 4, 3, null, null],
      'six present: the first three leaves leave 5, 4, 3; then the room is at the size',
    );
  });

  void it('marks nothing with the size 0, and the marks change no state', () => {
    const crowd = present(OWNER, 'a', 'b', 'c');
    const none = { ...CROWD_OF_3, announcedAudience: 0 };
    assert.deepEqual(decide(crowd, join('z'), NOW, none), [
      { type: 'UserJoined', user_id: 'z', at_ms: NOW },
    ]);
    const marked = decide(crowd, join('z'));
    const plain = decide(crowd, join('z'), NOW, none);
    assert.deepEqual(
      marked.reduce(evolveVoiceRoom, fold(crowd)),
      plain.reduce(evolveVoiceRoom, fold(crowd)),
    );
  });
});
