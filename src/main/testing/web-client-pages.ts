/**
 * Test-only: driving the web client (web/) in Chromium as a person would, for the browser
 * tests of one node and of a cluster: the build the nodes serve, sign-up through the form,
 * the page's `window.rooms` hook (media received, the socket), and a record of the page's
 * reconnecting banner (it may show for less time than a poll takes).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { CAMERA_SIMULCAST } from '../../../packages/client/src/media/camera-layers.js';

const PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** Generous: two browsers, nodes and a media worker share 2 loaded cores. */
export const PAGE_WAIT_MS = 20_000;

export interface Received {
  userId: number;
  kind: string;
  bytes: number;
  frames: number;
  /** Video: the width of the last decoded frame (which simulcast layer arrives). */
  frameWidth?: number;
  /** A meeting's: microphone, camera, screen or screen_audio. */
  source?: string;
}
/** One encoding the page sends of video (see MeetingMedia.sent). */
export interface Sent {
  rid: string;
  frameWidth: number;
  bytes: number;
  limitation: string;
}
export interface RoomsGlobal {
  rooms: {
    room: {
      received(): Promise<Received[]>;
      /** A meeting's: what it sends of video. */
      sent?(): Promise<Sent[]>;
      /** A voice room's: its audio's status and reason, and the producers being consumed. */
      audio?(): unknown;
    } | null;
    realtime: { opens: number; drop(): void };
  };
  reconnectingSeen?: boolean;
}

/** The build the nodes serve, made from the current sources (seconds). */
export function buildWebClient(): void {
  // Built once by scripts/run-tests.mjs before the test files start (another file's pages
  // may be loading web/dist: a build here would empty it under them).
  if (process.env.ROOMS_TEST_WEB_BUILT === '1') return;
  const built = spawnSync(process.execPath, ['scripts/build-web.mjs', '--install'], {
    cwd: PROJECT,
    encoding: 'utf8',
  });
  assert.equal(built.status, 0, built.stderr);
  assert.match(built.stderr, /web client built/, built.stderr);
}

/** Signs up through the form; the user id the header shows. */
export async function signUp(page: Page, username: string, nickname?: string): Promise<number> {
  await page.getByRole('button', { name: '没有账号？注册' }).click();
  await page.getByLabel('用户名').fill(username);
  if (nickname) await page.getByLabel('昵称（可选）').fill(nickname);
  await page.getByLabel('密码', { exact: true }).fill('secret123');
  await page.getByRole('button', { name: '注册并登录' }).click();
  const me = await page.locator('[data-test=me]').textContent();
  await page.locator('[data-test=ws-status].open').waitFor();
  const id = Number(/ID (\d+)/.exec(me ?? '')?.[1]);
  assert.ok(id > 0, `header: ${me}`);
  return id;
}

declare global {
  /** The web client's debug hook (web/src/debug.ts), in the pages these helpers evaluate in. */
  var rooms: RoomsGlobal['rooms'];
}

/** A figure of the page's current room from its debug hook (none without a room or hook). */
function roomFigures<T>(page: Page, hook: 'received' | 'sent'): Promise<T[]> {
  const figures = page.evaluate(
    (name): Promise<unknown[]> => globalThis.rooms.room?.[name]?.() ?? Promise.resolve([]),
    hook,
  );
  return figures as Promise<T[]>;
}

/** What the page's current room received, per member and kind. */
export const received = (page: Page): Promise<Received[]> => roomFigures(page, 'received');

/** What the page's current meeting sends of video, per encoding (for a failure's message). */
export const sent = (page: Page): Promise<Sent[]> => roomFigures(page, 'sent');

type CameraOrMicrophone = 'camera' | 'microphone';

/**
 * `from`'s microphone or camera among what a meeting page received (no source: a server
 * before sources were told, the kind's default).
 */
function streamIn(
  rows: readonly Received[],
  from: number,
  source: CameraOrMicrophone,
): Received | undefined {
  const kind = source === 'camera' ? 'video' : 'audio';
  return rows.find((r) => r.userId === from && r.kind === kind && (r.source ?? source) === source);
}

/** `userId`'s tile on a meeting page. */
export const tileOf = (page: Page, userId: number) =>
  page.locator(`figure[data-test=tile][data-user="${userId}"]`);

/**
 * Scrolls `userId`'s tile into view, as someone watching it would: the page asks the server
 * to forward no video for a tile off screen (`meeting.consumer.preferences`, paused), and a
 * click lower on the page (the chat's send button) may have scrolled it away.
 */
export const watchTileOf = (page: Page, userId: number): Promise<void> =>
  tileOf(page, userId).scrollIntoViewIfNeeded();

/**
 * Waits until `page` receives `from`'s audio and video, then until both keep growing;
 * `failure` describes the pages when it does not.
 */
export async function receivesMediaOf(
  page: Page,
  from: number,
  failure: () => Promise<string>,
): Promise<void> {
  await watchTileOf(page, from);
  const deadline = Date.now() + PAGE_WAIT_MS;
  let first: Received[] | undefined;
  for (;;) {
    // The microphone and the camera (a shared screen is looked at on its own).
    const now = (await received(page)).filter(
      (r) => r.userId === from && (r.source === undefined || !r.source.startsWith('screen')),
    );
    const audio = now.find((r) => r.kind === 'audio');
    const video = now.find((r) => r.kind === 'video');
    if (!first && audio && video && audio.bytes > 0 && video.bytes > 0 && video.frames > 0) {
      first = now;
    } else if (
      first &&
      now.every((r) => r.bytes > (first!.find((f) => f.kind === r.kind)?.bytes ?? 0))
    ) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`no growing media of ${from}: ${JSON.stringify(now)} ${await failure()}`);
    }
    await sleep(300);
  }
}

/** A voice-room page's inbound audio bytes of `from`, and every seat holder's figures. */
async function voiceBytes(page: Page, from: number): Promise<{ all: Received[]; of: number }> {
  // A voice page reports {userId, bytes} per seat holder (no kind, no frames).
  const all = await received(page);
  return { all, of: all.find((r) => r.userId === from)?.bytes ?? 0 };
}

/** What a voice-room page reports when a wait fails: its audio's status and reason, its errors. */
async function voicePageState(page: Page, all: Received[]): Promise<string> {
  const audio = await page.evaluate(() => globalThis.rooms.room?.audio?.());
  const shown = await page.locator('[role=alert]').allInnerTexts();
  return `${JSON.stringify(all)}; audio ${JSON.stringify(audio)}; shown ${JSON.stringify(shown)}`;
}

/**
 * Waits until a voice-room page receives `from`'s audio (inbound bytes of its consumer),
 * then until the bytes keep growing; a failure says what the page's audio reported (its
 * status and reason), the error the page shows, and what `more` describes.
 */
export async function hearsVoiceOf(
  page: Page,
  from: number,
  more: () => Promise<string> = () => Promise.resolve(''),
): Promise<void> {
  const deadline = Date.now() + PAGE_WAIT_MS;
  let first = 0;
  for (;;) {
    const now = await voiceBytes(page, from);
    if (first === 0 && now.of > 0) first = now.of;
    else if (first > 0 && now.of > first) return;
    if (Date.now() > deadline) {
      throw new Error(
        `no growing audio of ${from} (first ${first}): ${await voicePageState(page, now.all)} ` +
          (await more()),
      );
    }
    await sleep(250);
  }
}

/**
 * Waits until a voice-room page's inbound audio of `from` stops growing: two samples
 * `quietMs` apart with the same bytes (packets already on their way may still arrive
 * first, so it samples again until then).
 */
export async function hearsNoVoiceOf(page: Page, from: number, quietMs = 2_000): Promise<void> {
  const deadline = Date.now() + PAGE_WAIT_MS;
  let before = await voiceBytes(page, from);
  for (;;) {
    await sleep(quietMs);
    const now = await voiceBytes(page, from);
    if (now.of === before.of) return;
    if (Date.now() > deadline) {
      throw new Error(
        `audio of ${from} still growing (${before.of} → ${now.of}): ` +
          (await voicePageState(page, now.all)),
      );
    }
    before = now;
  }
}

/** From now on, the page remembers whether its reconnecting banner ever showed. */
export async function watchReconnecting(page: Page): Promise<void> {
  // A string: the test's transpiler would name a function it passes (`__name`, not in pages).
  await page.evaluate(`(() => {
    globalThis.reconnectingSeen = false;
    new MutationObserver(() => {
      if (document.querySelector('[data-test=reconnecting]')) globalThis.reconnectingSeen = true;
    }).observe(document.body, { childList: true, subtree: true });
  })()`);
}

export const sawReconnecting = (page: Page): Promise<boolean> =>
  page.evaluate(() => (globalThis as unknown as RoomsGlobal).reconnectingSeen === true);

/**
 * Waits until `page` decodes `from`'s video at a width `wanted` accepts (the simulcast layer
 * the server forwards for the tile); the width then.
 */
export async function videoWidthOf(
  page: Page,
  from: number,
  wanted: (width: number) => boolean,
  failure: () => Promise<string>,
): Promise<number> {
  await watchTileOf(page, from);
  const deadline = Date.now() + PAGE_WAIT_MS;
  for (;;) {
    const width = streamIn(await received(page), from, 'camera')?.frameWidth ?? 0;
    if (width > 0 && wanted(width)) return width;
    if (Date.now() > deadline) {
      throw new Error(`video of ${from} at width ${width}: ${await failure()}`);
    }
    await sleep(300);
  }
}

/** How long a sender may hold its top layer back before the wait gives up on it. */
const SENDER_WAIT_MS = 90_000;

/**
 * Waits until `viewer` decodes `from`'s camera at its top layer, 640 pixels wide (the tile
 * `from` is pinned in), counting time only while `sender` (`from`'s page) sends that layer.
 * Chromium stops sending it when its own estimate of the uplink falls, which the stalls of
 * 2 loaded cores cause, and no server can forward a layer that does not arrive. Fails after
 * PAGE_WAIT_MS of that layer sent and not decoded, or SENDER_WAIT_MS in all.
 */
export async function decodesTopLayerOf(
  viewer: Page,
  from: number,
  sender: Page,
  failure: () => Promise<string>,
): Promise<void> {
  await watchTileOf(viewer, from);
  const top = `r${CAMERA_SIMULCAST.length - 1}`;
  const started = Date.now();
  let sentFor = 0;
  let last: { at: number; bytes: number } | undefined;
  for (;;) {
    const video = streamIn(await received(viewer), from, 'camera');
    if (video?.frameWidth === 640) return;
    const bytes = (await sent(sender)).find((s) => s.rid === top)?.bytes ?? 0;
    const now = Date.now();
    if (last && bytes > last.bytes) sentFor += now - last.at;
    last = { at: now, bytes };
    if (sentFor > PAGE_WAIT_MS || now - started > SENDER_WAIT_MS) {
      throw new Error(
        `video of ${from} at width ${video?.frameWidth ?? 0} after its ${top} layer was sent ` +
          `for ${sentFor} ms: ${JSON.stringify(await sent(sender))} ${await failure()}`,
      );
    }
    await sleep(300);
  }
}

/** Waits until `page` decodes frames of `from`'s shared screen, growing. */
export async function receivesScreenOf(
  page: Page,
  from: number,
  failure: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + PAGE_WAIT_MS;
  let first = -1;
  for (;;) {
    const screen = (await received(page)).find((r) => r.userId === from && r.source === 'screen');
    const frames = screen?.frames ?? 0;
    if (first === -1 && frames > 0) first = frames;
    else if (first !== -1 && frames > first) return;
    if (Date.now() > deadline) {
      throw new Error(`no screen of ${from}: ${JSON.stringify(screen)} ${await failure()}`);
    }
    await sleep(300);
  }
}

/** What the page's global scope holds that Node's types do not know (the code runs there). */
interface PageStorage {
  readonly sessionStorage: { getItem(key: string): string | null };
}

/** The access token the page's session keeps (what its REST calls carry). */
export function pageToken(page: Page): Promise<string | null> {
  return page.evaluate(() =>
    (globalThis as unknown as PageStorage).sessionStorage.getItem('rooms.token'),
  );
}

/** A meeting page's inbound bytes of `from`'s microphone or camera. */
async function inboundBytes(page: Page, from: number, source: CameraOrMicrophone): Promise<number> {
  return streamIn(await received(page), from, source)?.bytes ?? 0;
}

/**
 * Waits until a meeting page's inbound `source` of `from` grows (`growing`) or stops: two
 * samples `quietMs` apart with the same bytes (packets already on their way may arrive
 * first, so it samples again until then).
 */
export async function streamOf(
  page: Page,
  from: number,
  source: CameraOrMicrophone,
  growing: boolean,
  quietMs = 2_000,
): Promise<void> {
  const deadline = Date.now() + PAGE_WAIT_MS;
  let before = await inboundBytes(page, from, source);
  for (;;) {
    await sleep(growing ? 300 : quietMs);
    const now = await inboundBytes(page, from, source);
    if (growing ? now > before && before > 0 : now === before) return;
    if (Date.now() > deadline) {
      const state = growing ? 'not growing' : 'still growing';
      throw new Error(`${source} of ${from} ${state} (${before} → ${now})`);
    }
    before = now;
  }
}
