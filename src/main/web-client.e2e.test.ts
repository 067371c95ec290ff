/**
 * The web client (web/) in a real browser against a real node (embedded SQLite and media
 * server) that serves it: two Chromium pages, as two people would use them, through the
 * page's own forms and buttons only (the operator's top-up aside).
 *
 * Meeting: A signs up and creates a meeting with a password; B signs up, tries the code and
 * cancels at the password prompt, gets A's invite (A picks B by name) as a live card, joins from it, is refused
 * with the seed's 会议密码错误 and then admitted with the right password; each page receives
 * the other's audio and video (inbound-rtp bytes, growing, read through the page's
 * `window.rooms` hook); A pins B's tile and B's video arrives in its large simulcast layer,
 * a smaller one once unpinned; B shares its screen and A shows it large and decodes it,
 * until B stops; the tiles and the chat name each member (nickname, never the id);
 * B pages back through the chat history; B raises a hand and A's tile of B shows it; A
 * force-mutes B and B's page follows; chat both ways; B's socket drops and the page shows
 * it is reconnecting, then recovers by itself (media flows again both ways); A kicks B and B
 * lands on the home page, told so; A turns the waiting room on, B joins again and waits, A
 * admits B from the list and B's page enters with media; A ends the meeting and A's page
 * says so.
 *
 * Voice room (audio through the node's media server: B hears A): A opens a room and
 * takes a seat, B joins from the lobby (which names the owner) and sees A by name on it, B
 * picks a gift from the catalog by name after the operator's top-up and both pages show it
 * (names and balances), A closes the room and B is told.
 *
 * Each step's page is saved to test-results/web-*.png.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import type { Recording as RecordingReply } from '../meeting/api/replies.js';

type Recording = z.output<typeof RecordingReply>;
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import pino from 'pino';
import { browserSkipReason, launchChromium } from '../media-server/testing/chromium.js';
import { probeRecording } from '../media-server/testing/probe.js';
import { mediaRoomOf } from '../media-cluster/media-servers.js';
import { startMeetingNode, type MeetingNode } from './testing/meeting-node.js';
import {
  buildWebClient,
  decodesTopLayerOf,
  hearsVoiceOf,
  PAGE_WAIT_MS as WAIT_MS,
  receivesMediaOf as receives,
  sawReconnecting,
  sent,
  signUp,
  streamOf,
  tileOf,
  watchTileOf,
  watchReconnecting,
  type RoomsGlobal,
  pageToken,
  receivesScreenOf,
  videoWidthOf,
} from './testing/web-client-pages.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PROJECT = path.join(HERE, '..', '..');
const RESULTS = path.join(PROJECT, 'test-results');
const ADMIN = 'web-client-e2e-admin-token';

void describe('the web client in Chromium', { skip: browserSkipReason() }, () => {
  let rooms: MeetingNode;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];
  /** The pages' console, printed when a wait fails. */
  const consoleLines: string[] = [];
  /** The node's warnings (a track that recorded nothing, FFmpeg's errors), printed too. */
  const nodeWarnings: string[] = [];
  const warnings = pino({ level: 'warn' }, { write: (line: string) => nodeWarnings.push(line) });

  before(async () => {
    buildWebClient();
    // The page's history test writes 31 chat lines at once, past the per-user chat limit.
    rooms = await startMeetingNode(
      [],
      { ROOMS_ADMIN_TOKEN: ADMIN, ROOMS_MEETING_CHATS_PER_USER: '0' },
      warnings,
    );
    assert.ok(rooms.node.media.server, 'the embedded media server did not start');
    browser = await launchChromium();
    await mkdir(RESULTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await rooms?.close();
  });

  /** What the node's Content-Security-Policy blocked: the client must need nothing it forbids. */
  const cspViolations = () => consoleLines.filter((l) => /Content Security Policy/i.test(l));

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(RESULTS, `web-${name}.png`), fullPage: true });

  /** A new tab (its own context: its own session) on the node's `/`. */
  async function open(name: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (e) => pageErrors.push(`${name}: ${e.message}`));
    page.on('console', (m) => consoleLines.push(`${name} ${m.type()}: ${m.text()}`));
    page.on('response', (r) => {
      if (r.status() >= 400 || r.url().includes('chats'))
        consoleLines.push(`${name} HTTP ${r.status()} ${r.url()}`);
    });
    await page.goto(`${rooms.node.httpAddress}/`);
    return page;
  }

  /** The meeting's first recording as the API lists it to A (none yet: undefined). */
  async function firstRecording(code: string): Promise<Recording | undefined> {
    const answer = await fetch(
      `${rooms.node.httpAddress}/api/v1/meeting/rooms/${code}/recordings`,
      {
        headers: { authorization: `Bearer ${(await pageToken(pageA))!}` },
      },
    );
    return ((await answer.json()) as { data: { list: Recording[] } }).data.list[0];
  }

  /**
   * Waits until the recording lists `count` tracks: each is listed once its FFmpeg listens,
   * which took a loaded machine 7 s (a track shorter than its first key frame has no file).
   */
  async function untilRecordingTracks(code: string, count: number): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const listed = (await firstRecording(code))?.tracks.length ?? 0;
      if (listed >= count) return;
      assert.ok(Date.now() < deadline, `the recording lists ${listed} of ${count} tracks`);
      await sleep(250);
    }
  }

  /**
   * The meeting's one recording, read through the API with A's token: a microphone and a
   * camera track of each of `users`, each file read by ffprobe with its codec and within a
   * second of the time it was recorded; a user who took no part is refused the files.
   */
  async function checkRecording(code: string, users: number[]) {
    const tokenA = (await pageToken(pageA))!;
    const get = (url: string, token: string) =>
      fetch(`${rooms.node.httpAddress}${url}`, { headers: { authorization: `Bearer ${token}` } });
    // The stop reaches the media server just after the meeting decided it: read until done.
    let recording: Recording | undefined;
    for (let i = 0; i < 100 && recording?.status !== 'complete'; i++) {
      if (i > 0) await sleep(200);
      recording = await firstRecording(code);
    }
    assert.ok(recording, 'one recording');
    assert.equal(recording.status, 'complete');
    const sources = recording.tracks.map((t) => `${t.user_id}:${t.source}`).sort();
    const expected = users.flatMap((u) => [`${u}:camera`, `${u}:microphone`]).sort();
    assert.deepEqual(sources, expected);
    const recorded = recording.duration_ms! / 1_000;
    const dir = await mkdtemp(path.join(tmpdir(), 'web-recording-'));
    try {
      for (const track of recording.tracks) {
        const answer = await get(track.url, tokenA);
        assert.equal(answer.status, 200, track.url);
        const file = path.join(dir, track.file);
        await writeFile(file, Buffer.from(await answer.arrayBuffer()));
        const { codec, duration } = await probeRecording(file);
        assert.equal(codec, track.kind === 'audio' ? 'opus' : 'vp8');
        const truth = recorded - track.start_offset_ms / 1_000;
        assert.ok(Math.abs(duration - truth) < 1, `${track.file}: ${duration} s of ${truth} s`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const account = async (step: 'register' | 'login') =>
      fetch(`${rooms.node.httpAddress}/api/v1/auth/${step}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'eve_web', password: 'secret123' }),
      });
    await account('register');
    const eve = (await (await account('login')).json()) as { data: { access_token: string } };
    const refused = await get(recording.tracks[0]!.url, eve.data.access_token);
    assert.deepEqual(
      [refused.status, ((await refused.json()) as { message: string }).message],
      [400, '你当前未在会议中'],
    );
  }

  /**
   * The meeting's video consumers as the media server sees them (paused, layers, score) and
   * what each page sends: what a wait for media prints when it fails.
   */
  async function videoPath(code: string): Promise<unknown> {
    const registry = rooms.node.media.server!.registry;
    const room = mediaRoomOf({ appCode: 'default', roomId: code }, 'meeting');
    const consumers = [];
    for (const router of registry.localRoutersOfRoom(room)) {
      for (const transportId of (await router.router.dump()).transportIds) {
        const transport = registry.transport(transportId);
        for (const id of (await transport.transport.dump()).consumerIds) {
          const { consumer } = registry.consumer(id);
          if (consumer.kind !== 'video') continue;
          const dump = await consumer.dump();
          consumers.push({
            peer: transport.peerId,
            paused: consumer.paused,
            producerPaused: consumer.producerPaused,
            preferred: consumer.preferredLayers,
            current: consumer.currentLayers,
            target:
              'targetSpatialLayer' in dump
                ? [dump.targetSpatialLayer, dump.targetTemporalLayer]
                : null,
            score: consumer.score,
            sent: (await consumer.getStats()).find((s) => s.type === 'outbound-rtp')?.byteCount,
          });
        }
      }
    }
    const sends = { a: await sent(pageA).catch(() => []), b: await sent(pageB).catch(() => []) };
    return { consumers, sends };
  }

  /** Waits until `page` receives `from`'s audio and video, then until both keep growing. */
  const receivesMediaOf = (page: Page, from: number, code?: string) =>
    receives(page, from, async () => {
      await shot(page, 'failed');
      const text = await page.locator('main').innerText();
      const video = code ? await videoPath(code).catch((e: Error) => e.message) : undefined;
      return JSON.stringify({ video, pageErrors, consoleLines, text });
    });

  let pageA: Page;
  let pageB: Page;
  let idA: number;
  let idB: number;

  /** Runs a scenario; on a failure both pages are saved and their console printed. */
  const scenario = (run: () => Promise<void>) => async () => {
    try {
      await run();
    } catch (error) {
      if (pageA) await shot(pageA, 'failed-a').catch(() => undefined);
      if (pageB) await shot(pageB, 'failed-b').catch(() => undefined);
      console.error([...consoleLines, ...nodeWarnings].join('\n'));
      throw error;
    }
  };

  void it(
    'runs a meeting: password, audio and video both ways, hand, mute, chat, kick, end',
    scenario(async () => {
      pageA = await open('A');
      idA = await signUp(pageA, 'alice_web', '爱丽丝');
      pageB = await open('B');
      idB = await signUp(pageB, 'bob_web');
      await shot(pageA, 'lobby');

      // A creates a meeting with a password and lands on its page.
      await pageA.getByLabel('会议标题').fill('周会');
      await pageA.getByLabel('密码（可选）').fill('1234');
      await pageA.locator('[data-test=create-meeting]').click();
      await pageA.waitForURL(/\/meeting\/\d{3}-\d{3}-\d{3}$/);
      const code = (await pageA.locator('[data-test=room-code]').textContent())!;
      // 31 earlier lines of chat (one more than a page): B pages back to the first.
      const token = (await pageToken(pageA))!;
      const posted = await pageA.evaluate(
        async ({ roomCode, token }) => {
          const auth = { authorization: `Bearer ${token}` };
          for (let i = 1; i <= 31; i++) {
            const res = await fetch(`/api/v1/meeting/rooms/${roomCode}/chats`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ content: `history line ${i}` }),
            });
            if (res.status !== 201) return res.status;
          }
          return 201;
        },
        { roomCode: code, token },
      );
      assert.equal(posted, 201);

      // B tries the code: asked for the password, B cancels.
      await pageB.getByLabel('会议号').fill(code);
      await pageB.locator('[data-test=join-meeting]').click();
      const prompt = pageB.locator('[data-test=password-prompt]');
      await prompt.getByRole('button', { name: '取消' }).click();
      await prompt.waitFor({ state: 'detached' });

      // A invites B by name (the app's user search suggests B): B's lobby shows the card live
      // (notification.new); B joins from it, is asked for the password, refused with the
      // seed's message, then admitted.
      await pageA.getByLabel('用户名或 ID').fill('bob_w');
      await pageA.locator('[data-test=invite-suggestion]', { hasText: 'bob_web' }).click();
      await pageA.locator('[data-test=invitees]', { hasText: 'bob_web' }).waitFor();
      await pageA.locator('[data-test=invite]').click();
      await pageA.locator('[data-test=invite-result]', { hasText: '已邀请 1 人' }).waitFor();
      const card = pageB.locator('[data-test=invite-card]', { hasText: '周会' });
      await card.waitFor();
      await shot(pageB, 'meeting-invite');
      await card.locator('[data-test=invite-join]').click();
      await prompt.getByLabel('入会密码').fill('9999');
      await prompt.getByRole('button', { name: '加入' }).click();
      await prompt.locator('[data-test=password-error]', { hasText: '会议密码错误' }).waitFor();
      await shot(pageB, 'meeting-password');
      await prompt.getByLabel('入会密码').fill('1234');
      await prompt.getByRole('button', { name: '加入' }).click();
      await pageB.waitForURL(new RegExp(`/meeting/${code}$`));

      // B sees the last 30 lines, and the first one once it asks for earlier ones.
      const chatB = pageB.locator('[data-test=chat]');
      await chatB.getByText('history line 31', { exact: true }).waitFor();
      assert.equal(await chatB.getByText('history line 1', { exact: true }).count(), 0);
      await pageB.locator('[data-test=chat-older]').click();
      await chatB.getByText('history line 1', { exact: true }).waitFor();
      await pageB.locator('[data-test=chat-older]').waitFor({ state: 'detached' });

      // Each page names the other (GET /users?ids=), never by id.
      await tileOf(pageB, idA).locator('figcaption', { hasText: '爱丽丝' }).waitFor();
      await tileOf(pageA, idB).locator('figcaption', { hasText: 'bob_web' }).waitFor();
      assert.equal(await pageB.getByText(`用户 ${idA}`).count(), 0);

      // Each receives the other's audio and video, and it keeps flowing.
      await receivesMediaOf(pageB, idA, code);
      await receivesMediaOf(pageA, idB, code);

      // Simulcast: A's grid tile of B gets a layer no wider than the camera; A pins B (the
      // tile spans the grid) and the server forwards B's full 640-pixel layer; unpinned, a
      // smaller one again.
      // On failure: which layers of each video the media server receives (rid, bitrate).
      const serverLayers = async () => {
        const room = mediaRoomOf({ appCode: 'default', roomId: code }, 'meeting');
        const producers = rooms.node.media.server!.registry.producersOfRoom(room);
        const layers = await Promise.all(
          producers
            .filter((p) => p.producer.kind === 'video')
            .map(async (p) => (await p.producer.getStats()).map((s) => [s.rid, s.bitrate])),
        );
        return JSON.stringify(layers);
      };
      const pin = pageA
        .locator('.tile-wrap', { has: tileOf(pageA, idB) })
        .locator('[data-test=pin]');
      await pin.click();
      await decodesTopLayerOf(pageA, idB, pageB, serverLayers);
      await pin.click();
      await videoWidthOf(pageA, idB, (w) => w > 0 && w < 640, serverLayers);

      // B shares its screen: A shows it large, named, and decodes it; B stops and it goes.
      await pageB.locator('[data-test=share-screen]').click();
      await pageB.locator('[data-test=share-screen][aria-pressed=true]').waitFor();
      await pageA.locator('[data-test=screen-view]', { hasText: 'bob_web' }).waitFor();
      await receivesScreenOf(pageA, idB, () => pageA.locator('main').innerText());
      await shot(pageA, 'meeting-screen');
      await pageB.locator('[data-test=share-screen]').click();
      await pageA.locator('[data-test=screen-view]').waitFor({ state: 'detached' });

      // A records ~5 s of both talking: every page shows it; each track's file holds its
      // codec for about the time it was recorded; another user may not download them.
      await pageA.locator('[data-test=record]').click();
      await pageB.locator('[data-test=recording]').waitFor();
      await untilRecordingTracks(code, 4);
      await sleep(5_000);
      await pageA.locator('[data-test=record]').click();
      await pageB.locator('[data-test=recording]').waitFor({ state: 'detached' });
      await pageA.locator('[data-test=recordings] li').first().waitFor();
      await checkRecording(code, [idA, idB]);

      // B raises a hand: A's tile of B shows it.
      await pageB.locator('[data-test=raise-hand]').click();
      await tileOf(pageA, idB).locator('[data-test=hand]').waitFor();

      // A force-mutes B: B's page follows (its button offers to unmute) and A sees B muted.
      await pageA
        .locator('.tile-wrap', { has: tileOf(pageA, idB) })
        .locator('[data-test=force-mute]')
        .click();
      await pageB.getByRole('button', { name: '取消静音' }).waitFor();
      await pageB.locator('[data-test=notice]', { hasText: '主持人已将你静音' }).waitFor();
      await tileOf(pageA, idB).locator('[data-test=muted]').waitFor();

      // Chat both ways.
      await pageA.getByLabel('消息').fill('大家好 from A');
      await pageA.locator('[data-test=chat-send]').click();
      await pageB.locator('[data-test=chat]', { hasText: '大家好 from A' }).waitFor();
      await pageB.getByLabel('消息').fill('hi from B');
      await pageB.locator('[data-test=chat-send]').click();
      await pageA.locator('[data-test=chat]', { hasText: 'hi from B' }).waitFor();
      const lineOfA = pageB.locator('[data-test=chat] li', { hasText: '大家好 from A' });
      assert.match(await lineOfA.innerText(), /^爱丽丝 · /);
      const lineOfB = pageA.locator('[data-test=chat] li', { hasText: 'hi from B' });
      assert.match(await lineOfB.innerText(), /^bob_web · /);
      await shot(pageA, 'meeting-a');
      await shot(pageB, 'meeting-b');

      // A's tile scrolled out of B's view (a short window, scrolled to the end): B's page asks
      // the server for none of A's video while A's voice goes on; back in view, it flows again.
      await pageB.setViewportSize({ width: 1100, height: 240 });
      await pageB.mouse.wheel(0, 10_000);
      await streamOf(pageB, idA, 'camera', false);
      await streamOf(pageB, idA, 'microphone', true);
      await pageB.setViewportSize({ width: 1100, height: 760 });
      await watchTileOf(pageB, idA);
      await streamOf(pageB, idA, 'camera', true);

      // B's socket drops (as on a network failure): the page reconnects by itself, joins the
      // meeting again on the new socket, and media flows both ways again on new consumers; the
      // page says it is reconnecting meanwhile.
      await watchReconnecting(pageB);
      await pageB.evaluate(() => (globalThis as unknown as RoomsGlobal).rooms.realtime.drop());
      await pageB.waitForFunction(
        () => (globalThis as unknown as RoomsGlobal).rooms.realtime.opens === 2,
      );
      await pageB.locator('[data-test=ws-status].open').waitFor();
      await receivesMediaOf(pageB, idA, code);
      await receivesMediaOf(pageA, idB, code);
      await pageB.locator('[data-test=reconnecting]').waitFor({ state: 'detached' });
      assert.equal(await sawReconnecting(pageB), true, 'B showed the reconnecting state');

      // A kicks B: B lands on the home page and is told.
      await pageA
        .locator('.tile-wrap', { has: tileOf(pageA, idB) })
        .locator('[data-test=kick]')
        .click();
      await pageB.waitForURL(`${rooms.node.httpAddress}/`);
      await pageB.locator('[data-test=notice]', { hasText: '你已被主持人移出会议' }).waitFor();
      await tileOf(pageA, idB).waitFor({ state: 'detached' });
      await shot(pageB, 'meeting-kicked');

      // A turns the waiting room on; B joins by the code again (the password asked) and
      // waits; A's list names B, A admits B, and B's page enters the meeting with media.
      await pageA.locator('[data-test=waiting-room]').click();
      await pageA.locator('[data-test=waiting-room][aria-pressed=true]').waitFor();
      await pageB.getByLabel('会议号').fill(code);
      await pageB.locator('[data-test=join-meeting]').click();
      await prompt.getByLabel('入会密码').fill('1234');
      await prompt.getByRole('button', { name: '加入' }).click();
      await pageB.locator('[data-test=waiting-screen]').waitFor();
      const waiting = pageA.locator(`[data-test=waiting-${idB}]`, { hasText: 'bob_web' });
      await waiting.waitFor();
      await shot(pageA, 'meeting-waiting');
      await waiting.locator('[data-test=admit]').click();
      await pageB.waitForURL(new RegExp(`/meeting/${code}$`));
      await pageA.locator('[data-test=waiting-list]').waitFor({ state: 'detached' });
      await receivesMediaOf(pageB, idA, code);

      // A ends the meeting (the button asks once more): A's page says so.
      await pageA.locator('[data-test=end]').click();
      await pageA.getByRole('button', { name: '确认结束会议？' }).click();
      await pageA.locator('[data-test=ended]', { hasText: '主持人已结束会议' }).waitFor();
      await shot(pageA, 'meeting-ended');
      // B, admitted from the waiting room, is told too and goes back to the lobby.
      const endedB = pageB.locator('[data-test=ended]', { hasText: '主持人已结束会议' });
      await endedB.getByRole('button', { name: '返回大厅' }).click();
      await pageB.waitForURL(`${rooms.node.httpAddress}/`);
      assert.deepEqual(pageErrors, []);
      assert.deepEqual(cspViolations(), []);
    }),
  );

  void it(
    'runs a voice room: a seat, a gift with balances, the room closed',
    scenario(async () => {
      await pageA.getByRole('button', { name: '返回大厅' }).click();
      await pageA.getByLabel('房间标题').fill('夜聊');
      await pageA.locator('[data-test=create-room]').click();
      await pageA.waitForURL(/\/voice\/vr_[\w-]+$/);
      // A takes a seat and sends the microphone: the server hears it and the seat turns
      // publishing (the page sends no confirm when the node has voice media).
      await pageA.locator('[data-test=take-seat]').first().click();
      const seatA = pageA.locator(`[data-test=seat][data-user="${idA}"]`);
      await seatA.locator('text=发言中').waitFor();
      assert.equal(await pageA.locator('[data-test=audio-unavailable]').count(), 0);

      // The operator tops B up (README: the admin API) and adds a gift to the catalog.
      const admin = (method: 'PUT' | 'POST', url: string, body: object) =>
        rooms.node.http.inject({
          method,
          url,
          headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
      const gift = await admin('PUT', '/api/v1/admin/gifts/rose', {
        app_code: 'default',
        name: 'Rose',
        price: 10,
      });
      assert.equal(gift.statusCode, 200, gift.body);
      const topUp = await admin('POST', '/api/v1/admin/wallets/topup', {
        user_id: idB,
        amount: 100,
        request_id: 'web-e2e-topup',
      });
      assert.equal(topUp.statusCode, 200, topUp.body);

      // B finds the room in the lobby and sees A on the seat.
      await pageB.locator('[data-test=notice] button').click();
      const lobbyRow = pageB.locator('[data-test=voice-rooms] li', { hasText: '夜聊' });
      await lobbyRow.locator('[data-test=owner]', { hasText: '爱丽丝' }).waitFor();
      await lobbyRow.getByRole('button').click();
      await pageB.waitForURL(/\/voice\/vr_[\w-]+$/);
      const seatOfA = pageB.locator(`[data-test=seat][data-user="${idA}"][data-state=publishing]`);
      await seatOfA.locator('.holder', { hasText: '爱丽丝' }).waitFor();
      // B hears A (inbound audio bytes growing) and sees A speaking.
      await hearsVoiceOf(pageB, idA);
      await pageB.locator(`[data-test=seat][data-user="${idA}"].speaking`).waitFor();
      await pageB.locator('[data-test=balance]', { hasText: '100' }).waitFor();
      await pageA.locator('[data-test=online]', { hasText: '2' }).waitFor();

      // B sends a gift to A, picked from the catalog by its name (GET /voice/gifts): both
      // pages show it, with names and the balances.
      await pageB.locator('[data-test=gift-to]').selectOption({ label: '爱丽丝' });
      await pageB.locator('[data-test=gift-id]').selectOption({ label: 'Rose（10）' });
      await pageB.locator('[data-test=send-gift]').click();
      await pageB.locator('[data-test=balance]', { hasText: '90' }).waitFor();
      await pageB
        .locator('[data-test=feed]', { hasText: '我 送给 爱丽丝 Rose ×1（10）' })
        .waitFor();
      await pageA
        .locator('[data-test=feed]', { hasText: 'bob_web 送给 我 Rose ×1（10）' })
        .waitFor();
      await pageA.locator('[data-test=balance]', { hasText: '10' }).waitFor();
      await shot(pageA, 'voice-a');
      await shot(pageB, 'voice-b');
      // The same page on a phone-sized screen.
      await pageB.setViewportSize({ width: 390, height: 844 });
      await shot(pageB, 'voice-b-phone');

      // A closes the room: B is told.
      await pageA.locator('[data-test=close-room]').click();
      await pageB.locator('[data-test=room-closed]').waitFor();
      await pageA.locator('[data-test=room-closed]').waitFor();
      await shot(pageB, 'voice-closed');
      assert.deepEqual(pageErrors, []);
      assert.deepEqual(cspViolations(), []);
    }),
  );
});
