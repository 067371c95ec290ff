/** Media events of voice rooms as the seed's RTC commands, bound to the mic session. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MediaEvent } from '../../media-server/events.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import { rtcCallOf } from './media-events.js';

const room = mediaRoomOf({ appCode: 'default', roomId: 'r:1' }, 'voice_room');
const seat = { room_kind: 'voice_room', user_id: '42', mic_session_id: 'ms-7' };
const scope = { room_code: room, router_id: 'router-1', peer_id: '42', seq: 9, at_ms: 5_000 };
const producer = (type: string, overrides: Record<string, unknown> = {}) =>
  ({
    ...scope,
    type,
    transport_id: 't-1',
    producer_id: 'p-1',
    kind: 'audio',
    app_data: seat,
    ...overrides,
  }) as unknown as MediaEvent;
const transport = (type: string, direction: 'send' | 'recv') =>
  ({ ...scope, type, transport_id: 't-1', direction, reason: 'closed' }) as unknown as MediaEvent;

describe('voice media events → RTC commands', () => {
  it('the first RTP of a seat producer is audio_started for its mic session', () => {
    assert.deepEqual(rtcCallOf(producer('producer_rtp_started'), 'media-1'), {
      method: 'RtcAudioStarted',
      request: {
        app_code: 'default',
        room_id: 'r:1',
        request_id: 'media:media-1:p-1:producer_rtp_started',
        user_id: '42',
        mic_session_id: 'ms-7',
        event_time_ms: 5_000,
      },
    });
  });

  it('a close of it is audio_stopped for that session; a pause (a seat mute) is not', () => {
    const call = rtcCallOf(producer('producer_closed'), 'media-1');
    assert.equal(call?.method, 'RtcAudioStopped');
    assert.equal(call?.request.mic_session_id, 'ms-7');
    assert.equal(call?.request.request_id, 'media:media-1:p-1:producer_closed');
    assert.equal(rtcCallOf(producer('producer_paused'), 'media-1'), null);
  });

  it('the send transport closing, losing ICE or failing DTLS is room_exited; a receiver is not', () => {
    for (const type of ['transport_closed', 'ice_disconnected', 'dtls_failed']) {
      const call = rtcCallOf(transport(type, 'send'), 'media-1');
      assert.equal(call?.method, 'RtcRoomExited', type);
      assert.equal(call?.request.user_id, '42');
      assert.equal(call?.request.mic_session_id, undefined);
      assert.equal(rtcCallOf(transport(type, 'recv'), 'media-1'), null);
    }
  });

  it('ignores meetings, video, producers without a seat, resumes and other events', () => {
    const meeting = mediaRoomOf({ appCode: 'default', roomId: '835-000-036' }, 'meeting');
    for (const event of [
      producer('producer_rtp_started', { room_code: meeting }),
      producer('producer_rtp_started', { kind: 'video' }),
      producer('producer_rtp_started', { app_data: {} }),
      producer('producer_rtp_started', { app_data: { ...seat, mic_session_id: '' } }),
      producer('producer_resumed'),
      producer('producer_created'),
      { type: 'worker_restarted', worker_index: 0, worker_pid: 1, seq: 1, at_ms: 1 },
    ] as MediaEvent[]) {
      assert.equal(rtcCallOf(event, 'media-1'), null, JSON.stringify(event));
    }
  });
});
