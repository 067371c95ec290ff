/**
 * Real media through the (offline-built) worker: two Chromium peers, mediasoup-client in the
 * page, signalling through the real orchestrator client. Peer A sends its fake microphone and
 * camera; peer B consumes both. The consumers forward nothing while paused and packets once
 * resumed, on the media server's stats and in B's own inbound-rtp stats: the worker did
 * DTLS, decrypted A's SRTP and encrypted B's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { browserSkipReason } from './testing/chromium.js';
import type { MediaEvent } from './events.js';
import type { MediaServer } from './server.js';
import { call, waitFor } from './testing/harness.js';
import { callPeer, startPeerPages, type PeerPages } from './testing/peer-pages.js';

/** The consumer's forwarded packets as the worker counts them (0 before any). */
async function forwarded(server: MediaServer, consumerId: string): Promise<number> {
  const r = await call<{ stats: { type: string; packetCount?: number }[] }>(
    server,
    'GET',
    `/internal/v1/consumers/${consumerId}/stats`,
  );
  assert.equal(r.status, 200);
  return r.body.data.stats.find((s) => s.type === 'outbound-rtp')?.packetCount ?? 0;
}

async function received(server: MediaServer, producerId: string): Promise<number> {
  const r = await call<{ stats: { type: string; packetCount?: number }[] }>(
    server,
    'GET',
    `/internal/v1/producers/${producerId}/stats`,
  );
  return r.body.data.stats.reduce((n, s) => n + (s.packetCount ?? 0), 0);
}

void describe('WebRTC media through the worker (Chromium)', { skip: browserSkipReason() }, () => {
  let peers: PeerPages;
  let server: MediaServer;
  let media: PeerPages['media'];
  let open: PeerPages['open'];
  let pageErrors: string[];
  const events: MediaEvent[] = [];

  before(async () => {
    // A short ICE consent timeout lets the test see a vanished peer reported.
    peers = await startPeerPages({ iceConsentTimeoutS: 6 });
    ({ server, media, open, pageErrors } = peers);
    server.events.subscribe((e) => events.push(e));
  });
  after(() => peers?.close());

  void it('forwards audio and video only after resume, and reports a peer that vanished', async () => {
    const room = '700-000-001';
    const pageA = await open();
    const a = await callPeer(pageA, 'send', room, 'alice');
    const audioId = a.producers.audio;
    const videoId = a.producers.video;
    assert.ok(audioId && videoId, `producers: ${JSON.stringify(a)} ${pageErrors.join('; ')}`);
    // A's SRTP reaches the worker and is decrypted: its producers count packets.
    for (const id of [audioId, videoId]) {
      await waitFor(
        async () => ((await received(server, id)) > 0 ? true : undefined),
        `packets on producer ${id}`,
        15_000,
      );
    }

    const pageB = await open();
    const b = await callPeer(pageB, 'receive', room, 'bob', [audioId, videoId]);
    const consumerIds = [b.consumers.audio, b.consumers.video];
    assert.ok(
      consumerIds.every(Boolean),
      `consumers: ${JSON.stringify(b)} ${pageErrors.join('; ')}`,
    );
    const transportStats = async () =>
      (
        await call<{ stats: { dtlsState: string; iceState: string }[] }>(
          server,
          'GET',
          `/internal/v1/transports/${b.transportId}/stats`,
        )
      ).body.data.stats[0];
    await waitFor(
      async () => ((await transportStats())?.dtlsState === 'connected' ? true : undefined),
      'B connected (ICE + DTLS)',
      15_000,
    );
    // Paused: a connected transport, a producer that is sending, and still nothing forwarded.
    await sleep(1_500);
    for (const id of consumerIds)
      assert.equal(await forwarded(server, id!), 0, `consumer ${id} before resume`);
    const before = await callPeer(pageB, 'received');
    assert.equal(before.audio?.packets ?? 0, 0);
    assert.equal(before.video?.packets ?? 0, 0);

    for (const id of consumerIds) await media.resumeConsumer(id!);
    for (const id of consumerIds) {
      await waitFor(
        async () => ((await forwarded(server, id!)) > 0 ? true : undefined),
        `forwarded on ${id}`,
        10_000,
      );
    }
    // B decrypts what the worker encrypted: packets and decoded video frames in B's stats.
    const after = await waitFor(
      async () => {
        const r = await callPeer(pageB, 'received');
        return (r.audio?.packets ?? 0) > 0 &&
          (r.video?.packets ?? 0) > 0 &&
          (r.video?.frames ?? 0) > 0
          ? r
          : undefined;
      },
      'B receives audio and video',
      10_000,
    );
    assert.ok(after.audio!.packets > 0 && after.video!.frames > 0);

    const connected = events
      .filter((e) => e.type === 'ice_connected')
      .map((e) => ('peer_id' in e ? e.peer_id : null));
    assert.deepEqual(connected.sort(), ['alice', 'bob']);

    // A peer that vanishes (tab closed) is reported once its ICE consent expires.
    await pageA.close();
    const gone = await waitFor(
      () => events.find((e) => e.type === 'ice_disconnected'),
      'ice_disconnected',
      15_000,
    );
    assert.ok(gone.type === 'ice_disconnected' && gone.peer_id === 'alice');

    // Closing the room's router ends both peers' transports, with the reason.
    await media.closeRouter(room);
    const closed = events.filter((e) => e.type === 'transport_closed');
    assert.deepEqual(closed.map((e) => ('peer_id' in e ? e.peer_id : null)).sort(), [
      'alice',
      'bob',
    ]);
    assert.deepEqual(pageErrors, []);
  });
});
