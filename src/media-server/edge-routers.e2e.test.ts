/**
 * A room's audience over edge routers, heard in real browsers: a media server with 2
 * workers and a consumer budget of 1 per router; one Chromium page sends a tone (the seat
 * holder), three pages listen through the orchestrator client as any member would. The
 * first listener lands on the origin, the next two on two edge routers; each decrypts the
 * seat's audio in its own inbound-rtp stats.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkipReason } from './testing/chromium.js';
import { waitFor } from './testing/harness.js';
import { callPeer, startPeerPages, type PeerPages } from './testing/peer-pages.js';

void describe('listeners on edge routers (Chromium)', { skip: browserSkipReason() }, () => {
  let peers: PeerPages;
  before(async () => {
    peers = await startPeerPages({ workers: 2, routerConsumers: 1 });
  });
  after(() => peers?.close());

  void it('every listener hears the seat holder, on the origin and on two edges', async () => {
    const room = 'voice_room:default:edge-e2e';
    const { server, media, open, pageErrors } = peers;
    const seat = await open();
    const producerId = await callPeer(seat, 'sendAudio', room, 'holder', { tone: true });
    const listeners: { page: Page; transportId: string }[] = [];
    for (const name of ['l1', 'l2', 'l3']) {
      const page = await open();
      const joined = await callPeer(page, 'receive', room, name, [producerId]);
      await media.resumeConsumer(joined.consumers.audio!);
      listeners.push({ page, transportId: joined.transportId });
    }

    const routers = server.registry.routersOfRoom(room);
    assert.deepEqual(
      routers.map((r) => r.role),
      ['origin', 'edge', 'edge'],
    );
    const placedOn = listeners.map(
      (l) => server.registry.transport(l.transportId).routerEntry.role,
    );
    assert.deepEqual(placedOn, ['origin', 'edge', 'edge']);

    for (const [i, { page }] of listeners.entries()) {
      await waitFor(
        async () => {
          const got = await callPeer(page, 'received');
          return (got.audio?.packets ?? 0) > 20 ? true : undefined;
        },
        `listener ${i + 1} to receive the seat's audio`,
        15_000,
      );
    }
    assert.deepEqual(pageErrors, []);
  });
});
