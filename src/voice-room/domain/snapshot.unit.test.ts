/**
 * Snapshots: today's state round-trips through JSON as it is; a snapshot written when the
 * room kept every user who ever came in (a plain `presence` record, each with its Presence
 * state) loads with the present users only and behaves as the room always did.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { voiceRoomDomain } from './domain.js';
import {
  activeRoom,
  closed,
  fold,
  givenState,
  joined,
  kicked,
  left,
  NOW,
  settings,
  T0,
} from './testing/given-when-then.js';
import type { VoiceRoomEvent, VoiceRoomState } from './types.js';
import { roomView } from './view.js';

const domain = voiceRoomDomain(settings);
const fromSnapshot = (json: string): VoiceRoomState => domain.fromSnapshot!(JSON.parse(json));

/** The state without its presence, as a snapshot's JSON text holds it. */
function jsonWithPresence(state: VoiceRoomState, presenceJson: string): string {
  const { presence: _, ...rest } = state;
  return `${JSON.stringify(rest).slice(0, -1)},"presence":${presenceJson}}`;
}

const stale = (user_id: string, at: number): VoiceRoomEvent => ({
  type: 'PresenceStale',
  user_id,
  at_ms: at,
});

describe('voice room snapshots', () => {
  it('round-trip through JSON as they are', () => {
    const state = fold([...activeRoom(), joined('7', T0 + 5), joined('__proto__'), left('7')]);
    const loaded = fromSnapshot(JSON.stringify(state));
    assert.deepEqual(loaded, state);
    assert.equal(domain.nextDeadline(loaded), T0 + settings.presenceTimeoutMs);
  });

  it('of before the presence book load with the present users only', () => {
    const history = [
      ...activeRoom(),
      joined('__proto__', T0 + 1),
      joined('7', T0 + 2),
      joined('12', T0 + 3),
      joined('30', T0 + 4),
      joined('1001', T0 + 5),
      { type: 'PresenceRefreshed', user_id: '7', at_ms: T0 + 40 } as const,
      left('12', T0 + 10),
      stale('30', T0 + 20),
      kicked('1001'),
    ];
    // As the room wrote it: everyone who ever came in, with their state, in key order.
    const presence = `{
      "7": {"state":"present","joined_at_ms":${T0 + 2},"last_seen_at_ms":${T0 + 40}},
      "12": {"state":"left","joined_at_ms":${T0 + 3},"last_seen_at_ms":${T0 + 3}},
      "30": {"state":"stale_left","joined_at_ms":${T0 + 4},"last_seen_at_ms":${T0 + 4}},
      "1001": {"state":"kicked","joined_at_ms":${T0 + 5},"last_seen_at_ms":${T0 + 5}},
      "__proto__": {"state":"present","joined_at_ms":${T0 + 1},"last_seen_at_ms":${T0 + 1}}
    }`;
    const replayed = fold(history);
    const loaded = fromSnapshot(jsonWithPresence(replayed, presence));
    assert.deepEqual(loaded, replayed, 'the same state as the whole log replayed');
    assert.deepEqual(
      roomView(loaded, 9).members.map((m) => m.user_id),
      ['7', '__proto__'],
    );
    assert.equal(domain.nextDeadline(loaded), T0 + 1 + settings.presenceTimeoutMs);
    const g = givenState(loaded);
    g.when({ type: 'RoomHeartbeat', user_id: '12' }).thenError('NOT_IN_ROOM');
    g.when({ type: 'JoinRoom', user_id: '12' }).then([joined('12', NOW)]);
    g.when({ type: 'JoinRoom', user_id: '30' }).then([joined('30', NOW)]);
    g.when({ type: 'JoinRoom', user_id: '1001' }).thenError('USER_BANNED');
    g.when({ type: 'RoomHeartbeat', user_id: '__proto__' }).then([
      { type: 'PresenceRefreshed', user_id: '__proto__', at_ms: NOW },
    ]);
  });

  it('of a closed room before the presence book load with nobody present', () => {
    const history = [...activeRoom(), joined('7'), closed()];
    const presence = `{"7":{"state":"closed_left","joined_at_ms":${T0},"last_seen_at_ms":${T0}}}`;
    const loaded = fromSnapshot(jsonWithPresence(fold(history), presence));
    assert.deepEqual(loaded, fold(history));
    assert.deepEqual(roomView(loaded, 4).members, []);
    givenState(loaded).when({ type: 'JoinRoom', user_id: '7' }).thenError('ROOM_CLOSED');
  });
});
