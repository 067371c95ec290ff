/**
 * The web client's voice-room state (web/src/voice-state.ts): the gap rule of
 * docs/protocol.md ("Staying consistent") and the frames applied to the GET room view.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyFrame,
  judge,
  RoomTracker,
  type RoomFrameData,
  type VoiceRoom,
} from '../../web/src/voice-state.js';

const room = (version: number, extra: Partial<VoiceRoom> = {}): VoiceRoom => ({
  room_id: 'r1',
  status: 'active',
  room_version: version,
  owner_user_id: '1',
  title: 't',
  admins: [],
  banned: [],
  online_count: 1,
  members: [{ user_id: '1' }],
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

describe('web client: the gap rule', () => {
  it('skips what the fetch has, applies the next frame and its chain, and sees gaps', () => {
    assert.equal(judge(frame(5, 4, 'e5', 'e4'), 5, null), 'skip');
    assert.equal(judge(frame(6, 5, 'e6', 'e5'), 5, null), 'apply');
    // Versions without a frame (heartbeats) in between: still the next frame.
    assert.equal(judge(frame(9, 3, 'e9', 'e3'), 5, null), 'apply');
    assert.equal(judge(frame(7, 6, 'e7', 'e6'), 5, null), 'gap');
    // The room moved to another node: unknown previous frame.
    assert.equal(judge(frame(7, null, 'e7', null), 5, null), 'gap');
    assert.equal(judge(frame(7, 6, 'e7', 'e6'), 5, 'e6'), 'apply');
    assert.equal(judge(frame(8, 7, 'e8', 'e7'), 5, 'e6'), 'gap');
    // Two events of one command share a version: the chain orders them.
    assert.equal(judge(frame(7, 7, 'e7b', 'e7'), 5, 'e7'), 'apply');
  });

  it('buffers frames during a fetch, refetches on a gap, and applies in order', async () => {
    let fetches = 0;
    let served = room(5);
    const seen: number[] = [];
    let release: () => void = () => undefined;
    const tracker = new RoomTracker(
      async () => {
        fetches++;
        if (fetches === 1) await new Promise<void>((resolve) => (release = resolve));
        return served;
      },
      (r) => seen.push(r.room_version),
      () => undefined,
    );
    const started = tracker.start();
    // Arrives while the first fetch is in flight: kept, then applied after it.
    tracker.frame('voice.member.joined', frame(6, 5, 'e6', 'e5', { user_id: '2' }));
    release();
    await started;
    assert.deepEqual(seen, [5, 6]);
    assert.deepEqual(
      tracker.room!.members.map((m) => m.user_id),
      ['1', '2'],
    );
    // A frame whose predecessor never arrived: fetched again, nothing applied from it twice.
    served = room(8, {
      online_count: 3,
      members: [{ user_id: '1' }, { user_id: '2' }, { user_id: '3' }],
    });
    tracker.frame('voice.member.joined', frame(8, 7, 'e8', 'e7', { user_id: '3' }));
    await tracker.start();
    assert.equal(tracker.refetches, 1);
    assert.equal(fetches, 2);
    assert.equal(tracker.room!.room_version, 8);
    assert.equal(tracker.room!.online_count, 3);
    tracker.frame('voice.member.left', frame(9, 8, 'e9', 'e8', { user_id: '2' }));
    assert.deepEqual(
      tracker.room!.members.map((m) => m.user_id),
      ['1', '3'],
    );
  });
});

describe('web client: voice-room frames applied to the room', () => {
  const f = (fields: Record<string, unknown>) => frame(6, 5, 'e', 'p', fields);

  it('resumes from a replay after a drop: in order, without a refetch, repeats dropped', async () => {
    let fetches = 0;
    const events: string[] = [];
    const tracker = new RoomTracker(
      () => {
        fetches++;
        return Promise.resolve(room(5));
      },
      () => undefined,
      (_event, data) => events.push(data.event_id),
    );
    await tracker.start();
    tracker.frame('voice.member.joined', frame(6, 5, 'e6', 'e5', { user_id: '2' }));
    assert.equal(tracker.lastEventId, 'e6');
    // The socket dropped; while resubscribing a live frame arrives before the ACK's replay.
    tracker.hold();
    tracker.frame('voice.member.joined', frame(8, 7, 'e8', 'e7', { user_id: '4' }));
    tracker.resume([
      { event: 'voice.member.joined', data: frame(7, 6, 'e7', 'e6', { user_id: '3' }) },
      { event: 'voice.member.joined', data: frame(8, 7, 'e8', 'e7', { user_id: '4' }) },
    ]);
    assert.deepEqual(events, ['e6', 'e7', 'e8'], 'each frame once, in order');
    assert.equal(fetches, 1, 'no refetch');
    assert.equal(tracker.refetches, 0);
    assert.equal(tracker.lastEventId, 'e8');
  });

  it('follows a seat through its states and keeps the view immutable', () => {
    const before = room(5);
    const up = applyFrame(
      before,
      'voice.mic.up',
      f({ user_id: '1', seat_index: 0, mic_session_id: 'm1', publish_deadline_ms: 99 }),
    );
    assert.equal(before.seats[0]!.state, 'idle');
    assert.deepEqual(up.seats[0], {
      seat_index: 0,
      state: 'pending_publish',
      user_id: '1',
      mic_session_id: 'm1',
      publish_deadline_ms: 99,
    });
    const live = applyFrame(up, 'voice.mic.publishing', f({ user_id: '1', seat_index: 0 }));
    assert.equal(live.seats[0]!.state, 'publishing');
    const moved = applyFrame(
      live,
      'voice.mic.changed',
      f({ user_id: '1', from_seat_index: 0, seat_index: 1, mic_session_id: 'm1' }),
    );
    assert.equal(moved.seats[0]!.user_id, null);
    assert.equal(moved.seats[1]!.state, 'pending_publish');
    const off = applyFrame(moved, 'voice.mic.released', f({ user_id: '1', seat_index: 1 }));
    assert.equal(off.seats[1]!.state, 'idle');
    const locked = applyFrame(off, 'voice.seat.locked', f({ seat_index: 1, locked: true }));
    assert.equal(locked.seats[1]!.state, 'locked');
    assert.equal(
      applyFrame(locked, 'voice.seat.locked', f({ seat_index: 1, locked: false })).seats[1]!.state,
      'idle',
    );
  });

  it('tracks members, admins, bans and the close', () => {
    let r = applyFrame(room(5), 'voice.member.joined', f({ user_id: '2' }));
    r = applyFrame(r, 'voice.admin.changed', f({ user_id: '2', is_admin: true }));
    assert.deepEqual(r.admins, ['2']);
    r = applyFrame(r, 'voice.member.kicked', f({ user_id: '2' }));
    assert.deepEqual([r.online_count, r.banned, r.members.length], [1, ['2'], 1]);
    r = applyFrame(r, 'voice.member.unbanned', f({ user_id: '2' }));
    assert.deepEqual(r.banned, []);
    r = applyFrame(r, 'voice.room.closed', f({}));
    assert.deepEqual([r.status, r.online_count], ['closed', 0]);
  });
});
