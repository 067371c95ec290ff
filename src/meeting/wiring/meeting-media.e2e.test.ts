/**
 * The meeting's real media, end to end: two headless Chromium members (mediasoup-client in
 * the page, testing/meeting-peer.mjs) on one real node (embedded SQLite and media server),
 * through the public API only, in the seed's order: REST create / join → `Device.load` with
 * the answer's `rtp_capabilities` → `/ws` `meeting.room.join` → send and recv transports →
 * audio and video produced → every announced producer consumed (paused) → resumed.
 *
 * What it proves: each member receives the other's audio AND video (inbound-rtp bytes of
 * the recv transport); nothing arrives while a consumer is paused although the transport is
 * connected and the other side is sending, and bytes flow after `meeting.consume.resume`;
 * the member who joins after the other already produces hears of those producers from the
 * frames right after its join ACK (they were produced before it followed the meeting, so no
 * broadcast could have told it); the host's REST end reaches both pages as
 * `meeting.room.ended`.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, launchChromium } from '../../media-server/testing/chromium.js';
import { silentLogger } from '../../cell/testing/harness.js';
import { meetingClient, type MeetingClient } from '../api/testing/meeting-client.js';
import { loadConfig } from '../../main/config.js';
import { startNode, type RoomsNode } from '../../main/node.js';
import { RESULTS, startPageServer, until } from '../../main/testing/browser-pages.js';

interface Frame {
  event: string;
  seq?: number;
  code: number;
  data: Record<string, unknown>;
}
interface Received {
  connection: string;
  consumers: Record<string, { kind: string; bytes: number; packets: number; frames: number }>;
}
/**
 * What the page script exposes. Callbacks given to `page.evaluate` run in the browser, so
 * they reach it through `globalThis` themselves.
 */
interface PeerGlobal {
  peerReady?: boolean;
  peer: {
    start(o: {
      wsUrl: string;
      roomCode: string;
      userId: number;
      rtpCapabilities: unknown;
    }): Promise<Record<string, string>>;
    consumers(): { producerId: string; id: string | null; kind: string | null }[];
    received(): Promise<Received>;
    sent(): Promise<Record<string, number>>;
    resume(): Promise<string[]>;
    log(): { frames: Frame[]; errors: string[]; closed: { code: number } | null };
  };
}

void describe(
  'a meeting’s audio and video between two Chromium members',
  { skip: browserSkipReason() },
  () => {
    let dir: string;
    let node: RoomsNode;
    let api: MeetingClient;
    let pages: { server: Server; url: string };
    let browser: Browser;
    const pageErrors: string[] = [];

    before(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'rooms-meeting-media-'));
      node = await startNode(
        loadConfig({
          ROOMS_DB_URL: path.join(dir, 'rooms.sqlite'),
          ROOMS_HTTP_HOST: '127.0.0.1',
          ROOMS_HTTP_PORT: '0',
          ROOMS_GRPC_PORT: '0',
          ROOMS_MEDIA_PORT: '0',
          ROOMS_MEDIA_WORKERS: '1',
          ROOMS_BCRYPT_COST: '4',
          ROOMS_LOG_LEVEL: 'silent',
        }),
        silentLogger,
      );
      // A worker binary exists (else skipped): the embedded media server must have started.
      assert.ok(node.media.server, 'the embedded media server did not start');
      api = meetingClient(() => node.http);
      await api.users(['host', 'guest']);
      pages = await startPageServer('meeting-peer.mjs');
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await new Promise((resolve) => (pages ? pages.server.close(resolve) : resolve(undefined)));
      await node?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const open = async (name: string): Promise<Page> => {
      const page = await browser.newPage({ viewport: { width: 800, height: 400 } });
      page.on('pageerror', (e) => pageErrors.push(`${name}: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(`${name}: ${m.text()}`);
      });
      await page.goto(pages.url);
      await page.waitForFunction(() => (globalThis as unknown as PeerGlobal).peerReady === true);
      return page;
    };
    /** Opens `/ws` as `who` in the page, joins `code` and produces; the producer ids by kind. */
    const start = (page: Page, who: string, code: string, rtpCapabilities: unknown) =>
      page.evaluate((o) => (globalThis as unknown as PeerGlobal).peer.start(o), {
        wsUrl: `${node.httpAddress.replace(/^http/, 'ws')}/ws?token=${api.tokens[who]}`,
        roomCode: code,
        userId: api.ids[who]!,
        rtpCapabilities,
      });
    const log = (page: Page) =>
      page.evaluate(() => (globalThis as unknown as PeerGlobal).peer.log());
    const received = (page: Page) =>
      page.evaluate(() => (globalThis as unknown as PeerGlobal).peer.received());
    const context = async () =>
      JSON.stringify({ pageErrors, a: (await log(pageA)).errors, b: (await log(pageB)).errors });
    let pageA: Page;
    let pageB: Page;

    void it('each member receives the other’s audio and video, only once resumed, and both hear the end', async () => {
      // A creates the meeting (REST): the answer carries the router's capabilities.
      const created = await api.call('POST', '/meeting/rooms', {
        as: 'host',
        body: { title: '媒体' },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const code = created.body.data.room.room_code as string;
      pageA = await open('A');
      const producedA = await start(pageA, 'host', code, created.body.data.rtp_capabilities);
      assert.ok(producedA.audio && producedA.video, `A produced ${JSON.stringify(producedA)}`);
      // A is really sending before B arrives.
      await until(async () => {
        const s = await pageA.evaluate(() => (globalThis as unknown as PeerGlobal).peer.sent());
        return (s.audio ?? 0) > 0 && (s.video ?? 0) > 0 ? true : undefined;
      }, 'A sends audio and video');

      // B joins (REST) after A produces, then opens /ws and joins the meeting.
      const joined = await api.call('POST', `/meeting/rooms/${code}/join`, {
        as: 'guest',
        body: {},
      });
      assert.equal(joined.status, 200, JSON.stringify(joined.body));
      pageB = await open('B');
      const producedB = await start(pageB, 'guest', code, joined.body.data.rtp_capabilities);
      assert.ok(producedB.audio && producedB.video, `B produced ${JSON.stringify(producedB)}`);

      // The late joiner: the two frames right after B's join ACK are A's live producers.
      const framesB = (await log(pageB)).frames;
      const ack = framesB.findIndex((f) => f.event === 'meeting.room.join.ack');
      assert.ok(ack >= 0 && framesB[ack]!.code === 0, JSON.stringify(framesB[ack]));
      const listed = framesB.slice(ack + 1, ack + 3);
      assert.deepEqual(
        listed.map((f) => [f.event, f.data.room_code, f.data.user_id, f.data.closed]),
        [
          ['meeting.member.producer.new', code, api.ids.host, false],
          ['meeting.member.producer.new', code, api.ids.host, false],
        ],
        JSON.stringify(framesB.slice(ack, ack + 4).map((f) => [f.event, f.data.producer_id])),
      );
      assert.deepEqual(
        Object.fromEntries(listed.map((f) => [f.data.kind, f.data.producer_id])),
        producedA,
      );

      // Each member consumes the other's two producers (A hears of B's by the broadcast).
      const consumersOf = async (page: Page, of: Record<string, string>) => {
        const list = await until(
          async () => {
            const l = await page.evaluate(() =>
              (globalThis as unknown as PeerGlobal).peer.consumers(),
            );
            return l.length === 2 && l.every((c) => c.id) ? l : undefined;
          },
          async () => `consumers of ${JSON.stringify(of)}: ${await context()}`,
        );
        assert.deepEqual(
          Object.fromEntries(list.map((c) => [c.kind, c.producerId])),
          of,
          'one consumer per producer of the other member',
        );
      };
      await consumersOf(pageB, producedA);
      await consumersOf(pageA, producedB);

      // Paused: both recv transports connected, both members sending, and nothing received.
      for (const page of [pageA, pageB]) {
        await until(
          async () => ((await received(page)).connection === 'connected' ? true : undefined),
          'recv transport connected',
        );
      }
      await until(async () => {
        const s = await pageB.evaluate(() => (globalThis as unknown as PeerGlobal).peer.sent());
        return (s.audio ?? 0) > 0 && (s.video ?? 0) > 0 ? true : undefined;
      }, 'B sends audio and video');
      await sleep(2_000);
      for (const page of [pageA, pageB]) {
        const paused = await received(page);
        for (const [producerId, r] of Object.entries(paused.consumers)) {
          assert.equal(
            r.bytes,
            0,
            `paused consumer of ${producerId} received ${JSON.stringify(r)}`,
          );
        }
      }

      // meeting.consume.resume for each consumer: the bytes flow, in both directions.
      for (const page of [pageA, pageB]) {
        assert.equal(
          (await page.evaluate(() => (globalThis as unknown as PeerGlobal).peer.resume())).length,
          2,
        );
      }
      const flowing = async (page: Page) =>
        until(
          async () => {
            const r = await received(page);
            const all = Object.values(r.consumers);
            const video = all.find((c) => c.kind === 'video');
            return all.length === 2 && all.every((c) => c.bytes > 0) && (video?.frames ?? 0) > 0
              ? r
              : undefined;
          },
          async () => `media after resume: ${await context()}`,
        );
      const firstA = await flowing(pageA);
      const firstB = await flowing(pageB);
      // …and keeps flowing.
      for (const [page, first] of [
        [pageA, firstA],
        [pageB, firstB],
      ] as const) {
        await until(async () => {
          const r = await received(page);
          return Object.entries(first.consumers).every(
            ([id, c]) => (r.consumers[id]?.bytes ?? 0) > c.bytes,
          )
            ? true
            : undefined;
        }, 'bytes keep growing');
      }

      await mkdir(RESULTS, { recursive: true });
      await pageA.screenshot({ path: path.join(RESULTS, 'meeting-media-a.png') });
      await pageB.screenshot({ path: path.join(RESULTS, 'meeting-media-b.png') });

      // A ends the meeting (REST): both pages get meeting.room.ended.
      const ended = await api.call('POST', `/meeting/rooms/${code}/end`, { as: 'host', body: {} });
      assert.equal(ended.status, 200, JSON.stringify(ended.body));
      for (const page of [pageA, pageB]) {
        const over = await until(async () => {
          const { frames } = await log(page);
          return frames.find((f) => f.event === 'meeting.room.ended');
        }, 'meeting.room.ended');
        assert.deepEqual(over.data.room_code, code);
        assert.equal(over.data.reason, 'host_ended');
      }
      assert.deepEqual(JSON.parse(await context()), { pageErrors: [], a: [], b: [] });
    });
  },
);
