/**
 * Server-chosen simulcast layers on one real node (embedded media server), through `/ws`
 * only: a member's camera in three layers; a viewer's `meeting.consumer.preferences` sets
 * the layer its consumer forwards (named, or the one its tile's width needs), resumes it on
 * that layer, and pauses it for a tile nobody sees; another user's consumer and a bad payload are refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MeetingClient } from '../api/testing/meeting-client.js';
import { mediaSkipReason, vp8RtpParameters } from '../../media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

/** A VP8 camera in three simulcast layers (one SSRC each, smallest first). */
function simulcastCamera(ssrc: number) {
  return {
    ...vp8RtpParameters(ssrc),
    encodings: [{ ssrc }, { ssrc: ssrc + 1 }, { ssrc: ssrc + 2 }],
  };
}

describe('simulcast layers chosen by the viewer', { skip: mediaSkipReason() }, () => {
  let api: MeetingClient;
  let started: MeetingNode | undefined;

  before(async () => {
    started = await startMeetingNode(['cam', 'viewer', 'nosy']);
    ({ api } = started);
  });
  after(async () => {
    await started?.close();
  });

  it('sets the layer and the pause of the viewer’s own consumer only', async () => {
    const post = (who: string, path: string, body: object = {}) =>
      api.call('POST', `/meeting/rooms${path}`, { as: who, body });
    const created = await post('cam', '', { title: '分层' });
    const code = created.body.data.room.room_code as string;
    const rtpCapabilities = created.body.data.rtp_capabilities as Record<string, unknown>;
    await post('viewer', `/${code}/join`);
    await post('nosy', `/${code}/join`);
    const [cam, viewer, nosy] = await Promise.all(
      ['cam', 'viewer', 'nosy'].map((who) => started!.socket(who)),
    );
    const ok = (ack: { code: number; message?: string; data: unknown }) => {
      assert.equal(ack.code, 0, ack.message);
      return ack.data as Record<string, string>;
    };
    for (const socket of [cam!, viewer!, nosy!]) {
      ok(await socket.request('meeting.room.join', { room_code: code }));
    }
    const transport = async (socket: typeof cam, direction: 'send' | 'recv') =>
      ok(await socket!.request('meeting.transport.create', { room_code: code, direction })).id!;
    const producerId = ok(
      await cam!.request('meeting.produce.start', {
        room_code: code,
        transport_id: await transport(cam, 'send'),
        kind: 'video',
        rtp_parameters: simulcastCamera(7770001),
      }),
    ).producer_id!;
    const consumerId = ok(
      await viewer!.request('meeting.consume.start', {
        room_code: code,
        transport_id: await transport(viewer, 'recv'),
        producer_id: producerId,
        rtp_capabilities: rtpCapabilities,
      }),
    ).id!;
    const consumer = () => started!.node.media.server!.registry.consumer(consumerId).consumer;
    assert.equal(consumer().type, 'simulcast');

    const prefer = (socket: typeof cam, wish: object) =>
      socket!.request('meeting.consumer.preferences', { consumer_id: consumerId, ...wish });
    // Created paused; the first wish resumes it already on its layer (resumed first, it would
    // start on the top one and switch down, waiting for a key frame of the small one).
    assert.equal(consumer().paused, true);
    let layerWhenResumed: number | undefined;
    consumer().observer.once('resume', () => {
      layerWhenResumed = consumer().preferredLayers?.spatialLayer;
    });
    ok(await prefer(viewer, { max_width: 300, paused: false }));
    assert.equal(consumer().paused, false);
    assert.equal(layerWhenResumed, 0, 'a small tile: resumed on the small layer');
    ok(await prefer(viewer, { spatial_layer: 2 }));
    assert.equal(consumer().preferredLayers?.spatialLayer, 2, 'the speaker’s tile: the large one');
    ok(await prefer(viewer, { max_width: 600 }));
    assert.equal(consumer().preferredLayers?.spatialLayer, 1);
    ok(await prefer(viewer, { paused: true }));
    assert.equal(consumer().paused, true, 'a tile nobody sees forwards nothing');
    ok(await prefer(viewer, { paused: false }));
    assert.equal(consumer().paused, false);

    const theirs = await prefer(nosy, { spatial_layer: 0 });
    assert.deepEqual([theirs.code, theirs.message], [-1, '会议资源不存在']);
    assert.equal(consumer().preferredLayers?.spatialLayer, 1, 'someone else’s: unchanged');
    for (const bad of [
      {},
      { spatial_layer: 3 },
      { spatial_layer: 1, max_width: 300 },
      { paused: 'yes' },
    ]) {
      const refused = await prefer(viewer, bad);
      assert.equal(refused.code, -1, JSON.stringify(bad));
      assert.match(String(refused.message), /^参数错误/);
    }
  });
});
