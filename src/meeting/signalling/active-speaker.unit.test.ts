/**
 * The meeting's active-speaker frame: a dominant-speaker report of a meeting router becomes
 * `meeting.active_speaker` on the owner only, once per change of speaker; other rooms, other
 * owners and producers without a member are ignored.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CellKey } from '../../cell/lease.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import type { MediaEvent } from '../../media-server/events.js';
import { MeetingActiveSpeaker } from './active-speaker.js';

const meeting: CellKey = { appCode: 'default', roomId: '835-000-036' };
let seq = 0;
const dominant = (roomCode: string, peer: string | null): MediaEvent => ({
  type: 'dominant_speaker',
  room_code: roomCode,
  router_id: 'r',
  producer_id: `p-${peer}`,
  peer_id: peer,
  app_data: {},
  seq: ++seq,
  at_ms: seq,
});

describe('meeting.active_speaker', () => {
  it('tells the followers of a meeting this node owns, once per change of speaker', () => {
    const sent: [CellKey, string, Record<string, unknown>][] = [];
    const speaker = new MeetingActiveSpeaker({
      owns: (key) => key.roomId === meeting.roomId,
      broadcaster: { toRoom: (key, event, data) => sent.push([key, event, data]) },
    });
    const room = mediaRoomOf(meeting, 'meeting');
    for (const peer of ['17', '17', '18', null, 'not-a-user', '17']) {
      speaker.onEvent(dominant(room, peer));
    }
    speaker.onEvent(dominant(mediaRoomOf({ ...meeting, roomId: '111-222-333' }, 'meeting'), '5'));
    speaker.onEvent(
      dominant(mediaRoomOf({ appCode: 'default', roomId: 'vr_1' }, 'voice_room'), '5'),
    );
    assert.deepEqual(
      sent.map(([key, event, data]) => [key.roomId, event, data]),
      [
        [meeting.roomId, 'meeting.active_speaker', { room_code: meeting.roomId, user_id: 17 }],
        [meeting.roomId, 'meeting.active_speaker', { room_code: meeting.roomId, user_id: 18 }],
        [meeting.roomId, 'meeting.active_speaker', { room_code: meeting.roomId, user_id: 17 }],
      ],
    );
  });
});
