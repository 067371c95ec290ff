/**
 * The web client's voice room (web/src/views/VoiceRoomView.vue and its panels) in a real
 * browser against a real node (embedded SQLite and media server): three Chromium pages, as
 * three people would use them, through the page's own forms and buttons only (the
 * operator's gift catalog and top-up aside).
 *
 * A opens a room and switches it to 申请上麦; B and C come in from the lobby. B applies, A
 * sees B in the applications and approves; B goes on the seat and sends the (fake)
 * microphone, and C hears B. A mutes B's seat (禁麦): every page shows it and C's audio of B
 * stops. B and C chat on the public chat, each line under its sender's name. C sends B a
 * gift: the rankings on A's and C's pages show C on the contribution board and B on charm.
 *
 * Each step's page is saved to test-results/web-voice-*.png.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, launchChromium } from '../media-server/testing/chromium.js';
import { startMeetingNode, type MeetingNode } from './testing/meeting-node.js';
import {
  buildWebClient,
  hearsNoVoiceOf,
  hearsVoiceOf,
  PAGE_WAIT_MS as WAIT_MS,
  signUp,
} from './testing/web-client-pages.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(HERE, '..', '..', 'test-results');
const ADMIN = 'web-voice-room-e2e-admin-token';

void describe('the web client’s voice room in Chromium', { skip: browserSkipReason() }, () => {
  let rooms: MeetingNode;
  let browser: Browser;
  const pages: Page[] = [];
  const pageErrors: string[] = [];
  /** The pages' console, printed when the scenario fails. */
  const consoleLines: string[] = [];

  before(async () => {
    buildWebClient();
    rooms = await startMeetingNode([], { ROOMS_ADMIN_TOKEN: ADMIN });
    assert.ok(rooms.node.media.server, 'the embedded media server did not start');
    browser = await launchChromium();
    await mkdir(RESULTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await rooms?.close();
  });

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(RESULTS, `web-voice-${name}.png`), fullPage: true });

  /** A new tab (its own context: its own session) on the node's `/`. */
  async function open(name: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    pages.push(page);
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (e) => pageErrors.push(`${name}: ${e.message}`));
    page.on('console', (m) => consoleLines.push(`${name} ${m.type()}: ${m.text()}`));
    page.on('response', (r) => {
      if (r.status() >= 400) consoleLines.push(`${name} HTTP ${r.status()} ${r.url()}`);
    });
    await page.goto(`${rooms.node.httpAddress}/`);
    return page;
  }

  /** The operator's admin API (README): the gift catalog, top-ups. */
  async function admin(method: 'PUT' | 'POST', url: string, body: object): Promise<void> {
    const res = await rooms.node.http.inject({
      method,
      url,
      headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    assert.equal(res.statusCode, 200, res.body);
  }

  /** From the lobby into the room titled `title`. */
  async function enter(page: Page, title: string): Promise<void> {
    await page
      .locator('[data-test=voice-rooms] li', { hasText: title })
      .getByRole('button')
      .click();
    await page.waitForURL(/\/voice\/vr_[\w-]+$/);
  }

  const seatOf = (page: Page, userId: number) =>
    page.locator(`[data-test=seat][data-user="${userId}"]`);

  void it('runs a room in apply mode: approval, 禁麦, chat, a gift and the rankings', async () => {
    try {
      const pageA = await open('A');
      await signUp(pageA, 'host_voice', '主持人');
      await pageA.getByLabel('房间标题').fill('申请房');
      await pageA.locator('[data-test=create-room]').click();
      await pageA.waitForURL(/\/voice\/vr_[\w-]+$/);
      // A switches the room to 申请上麦 (the owner's settings).
      await pageA.locator('[data-test=seat-mode]').selectOption('apply');
      await pageA.locator('header small', { hasText: '申请上麦' }).waitFor();

      const pageB = await open('B');
      const idB = await signUp(pageB, 'bella_voice', '贝拉');
      await enter(pageB, '申请房');
      const pageC = await open('C');
      const idC = await signUp(pageC, 'chen_voice', '小陈');
      // The operator's gift catalog and C's top-up, for the gift below.
      await admin('PUT', '/api/v1/admin/gifts/rose', {
        app_code: 'default',
        name: 'Rose',
        price: 10,
      });
      await admin('POST', '/api/v1/admin/wallets/topup', {
        user_id: idC,
        amount: 100,
        request_id: 'web-voice-e2e-topup',
      });
      await enter(pageC, '申请房');
      await pageA.locator('[data-test=online]', { hasText: '3' }).waitFor();

      // B applies (the seat's button says so in apply mode) and waits, able to cancel.
      const apply = pageB.locator('[data-test=take-seat]').first();
      assert.equal((await apply.innerText()).trim(), '申请上麦');
      await apply.click();
      await pageB.locator('[data-test=my-application] [data-test=cancel-application]').waitFor();
      // A sees B, by name, among the applications and approves.
      const application = pageA.locator(`[data-test=seat-applications] li[data-user="${idB}"]`);
      await application.filter({ hasText: '贝拉' }).waitFor();
      await shot(pageA, 'application');
      await application.locator('[data-test=approve]').click();
      await application.waitFor({ state: 'detached' });
      await pageB.locator('[data-test=my-application]').waitFor({ state: 'detached' });

      // B is on the seat and sends the microphone: the server hears it (publishing), C hears B.
      await pageB.locator(`[data-test=seat][data-user="${idB}"][data-state=publishing]`).waitFor();
      await seatOf(pageC, idB).locator('.holder', { hasText: '贝拉' }).waitFor();
      await hearsVoiceOf(pageC, idB);

      // A mutes B's seat (禁麦): every page shows it, B is told, and C's audio of B stops.
      await seatOf(pageA, idB).locator('[data-test=mute-seat]').click();
      for (const page of [pageA, pageB, pageC])
        await seatOf(page, idB).locator('[data-test=seat-muted]').waitFor();
      await pageB.locator('[data-test=notice]', { hasText: '你已被禁麦' }).waitFor();
      await hearsNoVoiceOf(pageC, idB);
      assert.equal(await seatOf(pageA, idB).getAttribute('data-user'), String(idB));
      await shot(pageC, 'seat-muted');

      // The public chat both ways, each line under its sender's name.
      const chatB = pageB.locator('[data-test=room-chat]');
      const chatC = pageC.locator('[data-test=room-chat]');
      await chatB.getByLabel('消息').fill('大家好，我是贝拉');
      await chatB.locator('[data-test=chat-send]').click();
      const lineOfB = chatC.locator(`li[data-user="${idB}"]`, { hasText: '大家好，我是贝拉' });
      await lineOfB.waitFor();
      assert.match(await lineOfB.innerText(), /^贝拉 · /);
      await chatC.getByLabel('消息').fill('欢迎贝拉');
      await chatC.locator('[data-test=chat-send]').click();
      const lineOfC = chatB.locator(`li[data-user="${idC}"]`, { hasText: '欢迎贝拉' });
      await lineOfC.waitFor();
      assert.match(await lineOfC.innerText(), /^小陈 · /);
      // The owner sees both lines, each with its delete and 禁言 buttons.
      const chatA = pageA.locator('[data-test=room-chat]');
      await chatA.locator(`li[data-user="${idC}"] [data-test=chat-mute]`).waitFor();
      await shot(pageB, 'chat');

      // C sends B a gift: the rankings on A's and C's pages show C on the contribution board
      // and B on charm.
      await pageC.locator('[data-test=balance]', { hasText: '100' }).waitFor();
      await pageC.locator('[data-test=gift-to]').selectOption({ label: '贝拉' });
      await pageC.locator('[data-test=gift-id]').selectOption({ label: 'Rose（10）' });
      await pageC.locator('[data-test=send-gift]').click();
      await pageC.locator('[data-test=balance]', { hasText: '90' }).waitFor();
      for (const page of [pageA, pageC]) {
        const rankings = page.locator('[data-test=rankings]');
        await rankings
          .locator(`[data-test=ranking-contribution] li[data-user="${idC}"]`, { hasText: '小陈' })
          .filter({ hasText: '10' })
          .waitFor();
        await rankings
          .locator(`[data-test=ranking-charm] li[data-user="${idB}"]`, { hasText: '贝拉' })
          .filter({ hasText: '10' })
          .waitFor();
      }
      // All time too.
      await pageA.locator('[data-test=rankings-all]').click();
      await pageA
        .locator(`[data-test=ranking-charm] li[data-user="${idB}"]`, { hasText: '贝拉' })
        .waitFor();
      assert.equal(await pageA.locator(`[data-test=ranking-contribution] li`).count(), 1);
      await shot(pageA, 'a');
      await shot(pageB, 'b');
      await shot(pageC, 'c');
      assert.deepEqual(pageErrors, []);
    } catch (error) {
      for (const [i, page] of pages.entries())
        await shot(page, `failed-${'abc'[i]}`).catch(() => undefined);
      console.error(consoleLines.join('\n'));
      throw error;
    }
  });
});
