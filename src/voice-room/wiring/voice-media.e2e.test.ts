/**
 * A voice room's real audio, end to end: three headless Chromium members
 * (testing/voice-peer.mjs) on one real node (embedded SQLite and media server), through the
 * public REST and `/ws` only. Carl owns the room, Anna takes seat 0 and publishes, Bert and
 * Carl are audience.
 *
 * What it proves: Bert and Carl receive Anna's audio (inbound-rtp bytes growing); Anna's
 * seat turns `publishing` with no client confirm (the media server heard her RTP); Bert,
 * not on a seat, is refused when he tries to produce; Anna's MicDown, a lock of her seat and
 * a kick each close her producer on the media server and stop Bert's bytes.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, launchChromium } from '../../media-server/testing/chromium.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import { RESULTS, startPageServer, until } from '../../main/testing/browser-pages.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

interface PeerGlobal {
  peerReady?: boolean;
  peer: {
    start(o: { wsUrl: string; roomId: string; userId: number }): Promise<unknown>;
    publish(): Promise<string>;
    received(): Promise<Record<string, number>>;
    log(): { frames: { event: string; data: Record<string, unknown> }[]; errors: string[] };
  };
}

void describe(
  'a voice room’s audio between three Chromium members',
  { skip: browserSkipReason() },
  () => {
    let started: MeetingNode | undefined;
    let pages: { server: Server; url: string } | undefined;
    let browser: Browser | undefined;
    const pageErrors: string[] = [];

    before(async () => {
      started = await startMeetingNode(['anna', 'bert', 'carl']);
      assert.ok(started.node.media.server, 'the embedded media server did not start');
      pages = await startPageServer('voice-peer.mjs');
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await new Promise((resolve) => (pages ? pages.server.close(resolve) : resolve(undefined)));
      await started?.close();
    });

    void it('the seat holder is heard; MicDown, a seat lock and a kick silence her', async () => {
      const { node, api } = started!;
      const call = async (who: string, method: 'GET' | 'POST', url: string, body?: object) => {
        const res = await api.call(method, `/voice${url}`, { as: who, body: body ?? {} });
        assert.ok(res.status < 300, `${url}: ${JSON.stringify(res.body)}`);
        return res.body.data as Record<string, unknown>;
      };
      const { room_id: roomId } = (await call('carl', 'POST', '/rooms', { title: '听' })) as {
        room_id: string;
      };
      for (const who of ['anna', 'bert', 'carl']) await call(who, 'POST', `/rooms/${roomId}/join`);
      const seat = async (index: number) =>
        ((await call('carl', 'GET', `/rooms/${roomId}`)).seats as { state: string }[])[index]!;
      const producers = () =>
        node.media.orchestrator!.listProducers(
          mediaRoomOf({ appCode: 'default', roomId }, 'voice_room'),
        );

      const open = async (who: string): Promise<Page> => {
        const page = await browser!.newPage({ viewport: { width: 480, height: 320 } });
        page.on('pageerror', (e) => pageErrors.push(`${who}: ${e.message}`));
        await page.goto(pages!.url);
        await page.waitForFunction(() => (globalThis as unknown as PeerGlobal).peerReady === true);
        await page.evaluate((o) => (globalThis as unknown as PeerGlobal).peer.start(o), {
          wsUrl: `${node.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens[who]}`,
          roomId,
          userId: api.ids[who]!,
        });
        return page;
      };
      const [anna, bert, carl] = [await open('anna'), await open('bert'), await open('carl')];
      const errorsOf = async () =>
        JSON.stringify({
          pageErrors,
          anna: (await anna.evaluate(() => (globalThis as unknown as PeerGlobal).peer.log()))
            .errors,
          bert: (await bert.evaluate(() => (globalThis as unknown as PeerGlobal).peer.log()))
            .errors,
        });

      // Bert is not on a seat: the server refuses his producer.
      assert.match(
        await bert.evaluate(() => (globalThis as unknown as PeerGlobal).peer.publish()),
        /NOT_ON_SEAT/,
      );

      /** Anna takes `index` and publishes; Bert and Carl hear her; her seat turns publishing. */
      const annaSpeaks = async (index: number) => {
        await call('anna', 'POST', `/rooms/${roomId}/mic/up`, { seat_index: index });
        const producerId = await anna.evaluate(() =>
          (globalThis as unknown as PeerGlobal).peer.publish(),
        );
        assert.doesNotMatch(producerId, /^error/, producerId);
        for (const page of [bert, carl]) {
          const first = await until(
            async () => {
              const bytes =
                (await page.evaluate(() => (globalThis as unknown as PeerGlobal).peer.received()))[
                  producerId
                ] ?? 0;
              return bytes > 0 ? bytes : undefined;
            },
            async () => `audio of ${producerId}: ${await errorsOf()}`,
          );
          await until(async () => {
            const bytes =
              (await page.evaluate(() => (globalThis as unknown as PeerGlobal).peer.received()))[
                producerId
              ] ?? 0;
            return bytes > first ? true : undefined;
          }, 'the bytes keep growing');
        }
        await until(
          async () => ((await seat(index)).state === 'publishing' ? true : undefined),
          'the seat turns publishing from the media side alone',
        );
        return producerId;
      };
      /** Anna's producer is gone from the media server and Bert's bytes of it stop growing. */
      const silenced = async (producerId: string, what: string) => {
        await until(
          async () =>
            (await producers()).some((p) => p.producerId === producerId) ? undefined : true,
          `${what}: the producer is closed on the media server`,
        );
        const at = async () =>
          (await bert.evaluate(() => (globalThis as unknown as PeerGlobal).peer.received()))[
            producerId
          ] ?? 0;
        // Packets already on the wire may still land (and stats lag a little): then nothing.
        await sleep(500);
        const settled = await at();
        await sleep(1_500);
        const later = await at();
        assert.equal(later, settled, `${what}: Bert receives nothing more (${settled} → ${later})`);
      };

      const first = await annaSpeaks(0);
      await mkdir(RESULTS, { recursive: true });
      await bert.screenshot({ path: path.join(RESULTS, 'voice-media-bert.png') });
      await call('anna', 'POST', `/rooms/${roomId}/mic/down`);
      await silenced(first, 'MicDown');

      const second = await annaSpeaks(0);
      await call('carl', 'POST', `/rooms/${roomId}/seats/lock`, { seat_index: 0, locked: true });
      await silenced(second, 'a lock of her seat');

      const third = await annaSpeaks(1);
      await call('carl', 'POST', `/rooms/${roomId}/kick`, { user_id: api.ids.anna });
      await silenced(third, 'a kick');
      assert.deepEqual(JSON.parse(await errorsOf()), { pageErrors: [], anna: [], bert: [] });
    });
  },
);
