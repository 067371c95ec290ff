/**
 * The web client's voice-room state (web/src/voice-state.ts): the frames applied to the GET
 * room view. Which frames apply (the gap rule of docs/protocol.md, "Staying consistent", the
 * replay after a drop) is the SDK's RoomFeed's: packages/client/test/room-feed.unit.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyFrame, type RoomFrameData, type VoiceRoom } from '../../web/src/voice-state.js';

const room = (version: number, extra: Partial<VoiceRoom> = {}): VoiceRoom => ({
  room_id: 'r1',
  status: 'active',
  room_version: version,
  owner_user_id: 1,
  title: 't',
  admins: [],
  banned: [],
  online_count: 1,
  members: [{ user_id: 1 }],
  seats: [0, 1].map((seat_index) => ({
    seat_index,
    state: 'idle',
    user_id: null,
    mic_session_id: null,
    publish_deadline_ms: null,
  })),
  ...extra,
});

const frame = (
  version: number,
  prevVersion: number | null,
  id: string,
  prevId: string | null,
  fields: Record<string, unknown> = {},
): RoomFrameData => ({
  room_version: version,
  prev_room_version: prevVersion,
  event_id: id,
  prev_event_id: prevId,
  ...fields,
});

describe('web client: voice-room frames applied to the room', () => {
  const f = (fields: Record<string, unknown>) => frame(6, 5, 'e', 'p', fields);

  it('follows the seat controls: a muted seat keeps its mute, settings, invitations, mic mutes', () => {
    const muted = applyFrame(room(5), 'voice.seat.muted', f({ seat_index: 0, muted: true }));
    const held = applyFrame(
      muted,
      'voice.mic.up',
      f({ user_id: 1, seat_index: 0, mic_session_id: 'm1', publish_deadline_ms: 9 }),
    );
    const freed = applyFrame(held, 'voice.mic.released', f({ user_id: 1, seat_index: 0 }));
    assert.equal(freed.seats[0]!.muted, true, 'the mute is the seat’s');
    const grown = applyFrame(freed, 'voice.seat.count.changed', f({ seat_count: 3 }));
    assert.deepEqual(
      grown.seats.map((s) => [s.seat_index, s.state]),
      [
        [0, 'idle'],
        [1, 'idle'],
        [2, 'idle'],
      ],
    );
    const updated = applyFrame(
      grown,
      'voice.room.updated',
      f({ announcement: '欢迎', seat_mode: 'apply' }),
    );
    assert.deepEqual(
      [updated.title, updated.announcement, updated.seat_mode],
      ['t', '欢迎', 'apply'],
    );
    const invited = applyFrame(
      updated,
      'voice.seat.invited',
      f({ user_id: 1, seat_index: null, operator_user_id: 2, expires_at_ms: 50 }),
    );
    assert.deepEqual(invited.seat_invitations, [
      { user_id: 1, seat_index: null, operator_user_id: 2, expires_at_ms: 50 },
    ]);
    const applied = applyFrame(invited, 'voice.seat.applied', f({ user_id: 3 }));
    assert.equal(applied.seat_application_count, 1);
    const selfMuted = applyFrame(applied, 'voice.mic.muted', f({ user_id: 1, muted: true }));
    assert.deepEqual(selfMuted.mic_muted, [1]);
    const left = applyFrame(selfMuted, 'voice.member.left', f({ user_id: 1, reason: 'leave' }));
    assert.deepEqual(left.mic_muted, [], 'a presence’s end clears its own mute');
    const ended = applyFrame(
      left,
      'voice.seat.invitation.ended',
      f({ user_id: 1, reason: 'left' }),
    );
    assert.deepEqual(ended.seat_invitations, []);
  });

  it('follows a seat through its states and keeps the view immutable', () => {
    const before = room(5);
    const up = applyFrame(
      before,
      'voice.mic.up',
      f({ user_id: 1, seat_index: 0, mic_session_id: 'm1', publish_deadline_ms: 99 }),
    );
    assert.equal(before.seats[0]!.state, 'idle');
    assert.deepEqual(up.seats[0], {
      seat_index: 0,
      state: 'pending_publish',
      user_id: 1,
      mic_session_id: 'm1',
      publish_deadline_ms: 99,
    });
    const live = applyFrame(up, 'voice.mic.publishing', f({ user_id: 1, seat_index: 0 }));
    assert.equal(live.seats[0]!.state, 'publishing');
    const moved = applyFrame(
      live,
      'voice.mic.changed',
      f({ user_id: 1, from_seat_index: 0, seat_index: 1, mic_session_id: 'm1' }),
    );
    assert.equal(moved.seats[0]!.user_id, null);
    assert.equal(moved.seats[1]!.state, 'pending_publish');
    const off = applyFrame(moved, 'voice.mic.released', f({ user_id: 1, seat_index: 1 }));
    assert.equal(off.seats[1]!.state, 'idle');
    const locked = applyFrame(off, 'voice.seat.locked', f({ seat_index: 1, locked: true }));
    assert.equal(locked.seats[1]!.state, 'locked');
    assert.equal(
      applyFrame(locked, 'voice.seat.locked', f({ seat_index: 1, locked: false })).seats[1]!.state,
      'idle',
    );
  });

  it('tracks members, admins, bans and the close', () => {
    let r = applyFrame(room(5), 'voice.member.joined', f({ user_id: 2 }));
    r = applyFrame(r, 'voice.admin.changed', f({ user_id: 2, is_admin: true }));
    assert.deepEqual(r.admins, [2]);
    r = applyFrame(r, 'voice.member.kicked', f({ user_id: 2 }));
    assert.deepEqual([r.online_count, r.banned, r.members.length], [1, [2], 1]);
    r = applyFrame(r, 'voice.member.unbanned', f({ user_id: 2 }));
    assert.deepEqual(r.banned, []);
    r = applyFrame(r, 'voice.room.closed', f({}));
    assert.deepEqual([r.status, r.online_count], ['closed', 0]);
  });
});
