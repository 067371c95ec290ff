/**
 * Three people in one meeting, in Chromium, through the web client's own buttons against a
 * real node (embedded SQLite and media server). A, the host, has a silent fake microphone
 * (a WAV of silence); B and C play a WAV that sounds like speech to the media server's
 * speaker detector (src/media-server/testing/chromium.ts: Chromium's own beep took it up to
 * 20 s and more to notice), so who talks is known.
 *
 * - B joins by the code; A turns the waiting room on, C joins and waits, A admits C.
 * - A's grid tiles of B and C decode a small simulcast layer; A pins C and decodes the large
 *   one (timed while C's browser sends it: it stops when its estimate of the uplink falls).
 * - The speaker frame follows whoever talks: C mutes and A's page shows B speaking; B mutes,
 *   C unmutes, and it shows C.
 * - B shares its screen: A and C both show it and decode it.
 * - A mutes everyone without letting them unmute: A stops receiving B's and C's audio, B's
 *   own unmute is refused with the reason and stays silent; once A allows it, B unmutes and
 *   A hears B again.
 *
 * Each step's page is saved to test-results/web3-*.png on a failure.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import {
  browserSkipReason,
  launchChromium,
  silentWav,
  talkingWav,
} from '../media-server/testing/chromium.js';
import { startMeetingNode, type MeetingNode } from './testing/meeting-node.js';
import {
  buildWebClient,
  decodesTopLayerOf,
  PAGE_WAIT_MS,
  receivesMediaOf,
  receivesScreenOf,
  signUp,
  streamOf,
  tileOf,
  videoWidthOf,
} from './testing/web-client-pages.js';

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results');

void describe('a meeting of three in Chromium', { skip: browserSkipReason() }, () => {
  let rooms: MeetingNode;
  let talking: Browser;
  let silent: Browser;
  let dir: string;
  const pages: Record<string, Page> = {};
  const pageErrors: string[] = [];
  const consoleLines: string[] = [];

  before(async () => {
    buildWebClient();
    rooms = await startMeetingNode([]);
    dir = await mkdtemp(path.join(tmpdir(), 'web3-'));
    const silence = path.join(dir, 'silence.wav');
    await writeFile(silence, silentWav());
    const speech = path.join(dir, 'talking.wav');
    await writeFile(speech, talkingWav());
    talking = await launchChromium({ microphoneFile: speech });
    silent = await launchChromium({ microphoneFile: silence });
    await mkdir(RESULTS, { recursive: true });
  });
  after(async () => {
    await talking?.close();
    await silent?.close();
    await rooms?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function open(name: string, browser: Browser): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_WAIT_MS);
    page.on('pageerror', (e) => pageErrors.push(`${name}: ${e.message}`));
    page.on('console', (m) => consoleLines.push(`${name} ${m.type()}: ${m.text()}`));
    await page.goto(`${rooms.node.httpAddress}/`);
    pages[name] = page;
    return page;
  }

  const toggleMic = (page: Page) => page.locator('[data-test=toggle-mic]').click();
  const describePage = (page: Page) => async () => page.locator('main').innerText();

  void it('shares a screen to two, shows the speaker, simulcast layers and mute-all', async () => {
    try {
      const a = await open('A', silent);
      await signUp(a, 'host_three');
      const b = await open('B', talking);
      const idB = await signUp(b, 'bob_three');
      const c = await open('C', talking);
      const idC = await signUp(c, 'carol_three');

      await a.getByLabel('会议标题').fill('三人会');
      await a.locator('[data-test=create-meeting]').click();
      await a.waitForURL(/\/meeting\/\d{3}-\d{3}-\d{3}$/);
      const code = (await a.locator('[data-test=room-code]').textContent())!;

      // B joins by the code; then A turns the waiting room on and C waits until admitted.
      await b.getByLabel('会议号').fill(code);
      await b.locator('[data-test=join-meeting]').click();
      await b.waitForURL(new RegExp(`/meeting/${code}$`));
      await a.locator('[data-test=waiting-room]').click();
      await a.locator('[data-test=waiting-room][aria-pressed=true]').waitFor();
      await c.getByLabel('会议号').fill(code);
      await c.locator('[data-test=join-meeting]').click();
      await c.locator('[data-test=waiting-screen]').waitFor();
      const waiting = a.locator(`[data-test=waiting-${idC}]`, { hasText: 'carol_three' });
      await waiting.locator('[data-test=admit]').click();
      await c.waitForURL(new RegExp(`/meeting/${code}$`));

      await receivesMediaOf(a, idB, describePage(a));
      await receivesMediaOf(a, idC, describePage(a));
      await receivesMediaOf(c, idB, describePage(c));

      // A's grid asks for small layers; pinned, C's tile gets the 640-pixel one.
      const small = (w: number) => w > 0 && w < 640;
      await videoWidthOf(a, idB, small, describePage(a));
      await videoWidthOf(a, idC, small, describePage(a));
      const pinC = a.locator('.tile-wrap', { has: tileOf(a, idC) }).locator('[data-test=pin]');
      await pinC.click();
      await decodesTopLayerOf(a, idC, c, describePage(a));
      await videoWidthOf(a, idB, small, describePage(a));
      await pinC.click();

      // The speaker follows whoever talks (the media server's observer, not the page).
      await toggleMic(c);
      await tileOf(a, idB).and(a.locator('[data-speaking=true]')).waitFor();
      await toggleMic(b);
      await toggleMic(c);
      await tileOf(a, idC).and(a.locator('[data-speaking=true]')).waitFor();
      await toggleMic(b);
      await streamOf(a, idB, 'microphone', true);

      // B shares its screen: A and C show it and decode it; B stops.
      await b.locator('[data-test=share-screen]').click();
      for (const viewer of [a, c]) {
        await viewer.locator('[data-test=screen-view]', { hasText: 'bob_three' }).waitFor();
        await receivesScreenOf(viewer, idB, describePage(viewer));
      }
      await b.locator('[data-test=share-screen]').click();
      await a.locator('[data-test=screen-view]').waitFor({ state: 'detached' });

      // Mute-all, members not allowed to unmute: A receives no audio of B or C.
      await a.locator('[data-test=mute-all]').click();
      for (const member of [b, c]) await member.getByRole('button', { name: '取消静音' }).waitFor();
      await streamOf(a, idB, 'microphone', false);
      await streamOf(a, idC, 'microphone', false);
      // B tries to unmute: refused with the reason, and still silent on A.
      await toggleMic(b);
      await b.locator('[data-test=error]', { hasText: '主持人已禁止自行解除静音' }).waitFor();
      await streamOf(a, idB, 'microphone', false);
      // A allows it: B unmutes and A hears B again.
      await a.locator('[data-test=allow-unmute]').click();
      await a.locator('[data-test=allow-unmute]').waitFor({ state: 'detached' });
      await b.locator('[data-test=error] button').click();
      await toggleMic(b);
      await b.getByRole('button', { name: '静音', exact: true }).waitFor();
      await streamOf(a, idB, 'microphone', true);
      assert.deepEqual(pageErrors, []);
    } catch (error) {
      for (const [name, page] of Object.entries(pages)) {
        await page.screenshot({ path: path.join(RESULTS, `web3-${name}.png`) }).catch(() => 0);
      }
      console.error(consoleLines.join('\n'));
      throw error;
    }
  });
});
