/**
 * Test-only: what the Chromium peer tests run on: a media server on loopback, the
 * orchestrator client the nodes use, the signalling web server of the peer page
 * (./signalling.ts, ./browser-peer.mjs) and Chromium. `open()` loads a peer page and waits
 * for its script; every page error and console error lands in `pageErrors`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { HttpMediaOrchestrator } from '../../adapters/media/http-media-orchestrator.js';
import type { MediaServerOptions } from '../options.js';
import type { MediaServer } from '../server.js';
import { launchChromium } from './chromium.js';
import { startTestMediaServer, TEST_TOKEN } from './harness.js';
import { startSignalling } from './signalling.js';

const PEER_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'browser-peer.mjs');

/** What ./browser-peer.mjs puts on its page as `window.peer`, declared once. */
export interface PeerApi {
  /** Sends the fake microphone and camera; the producer ids by kind. */
  send(
    room: string,
    peerId: string,
  ): Promise<{ transportId: string; producers: Record<string, string> }>;
  /** Consumes these producers (paused on the server until resumed); the consumer ids by kind. */
  receive(
    room: string,
    peerId: string,
    producerIds: string[],
  ): Promise<{ transportId: string; consumers: Record<string, string> }>;
  /** Per kind, the packets and decoded frames of its inbound-rtp stats. */
  received(): Promise<Record<string, { packets: number; frames: number }>>;
  /** Sends one WebAudio microphone: a 440 Hz tone or silence; the producer id. */
  sendAudio(
    room: string,
    peerId: string,
    options: { tone: boolean; codecOptions?: Record<string, boolean> },
  ): Promise<string>;
  /** What the producer sent so far (outbound-rtp). */
  sent(): Promise<{ bytes: number; packets: number }>;
}

/** A page's script may not have run yet: the globals it sets, as far as we read them. */
type PeerWindow = { peer?: Record<string, (...args: unknown[]) => unknown>; peerReady?: boolean };

/** Calls `peer.<method>(...args)` in the page (in the browser) and answers its result. */
export function callPeer<M extends keyof PeerApi>(
  page: Page,
  method: M,
  ...args: Parameters<PeerApi[M]>
): Promise<Awaited<ReturnType<PeerApi[M]>>> {
  const answer = page.evaluate(
    ({ name, values }) => (globalThis as PeerWindow).peer?.[name]?.(...values),
    { name: method, values: args },
  );
  // The page script implements PeerApi: its answer is the method's declared one.
  return answer as Promise<Awaited<ReturnType<PeerApi[M]>>>;
}

/** Loads the peer page at `url` in `page` and waits for its script. */
export async function openPeerPage(page: Page, url: string): Promise<Page> {
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as PeerWindow).peerReady === true);
  return page;
}

export interface PeerPages {
  readonly server: MediaServer;
  readonly media: HttpMediaOrchestrator;
  readonly pageErrors: string[];
  /** A new page, once `globalThis.peerReady` says its script runs. */
  readonly open: () => Promise<Page>;
  readonly close: () => Promise<void>;
}

export async function startPeerPages(
  overrides: Partial<MediaServerOptions> = {},
): Promise<PeerPages> {
  const server = await startTestMediaServer(overrides);
  const media = new HttpMediaOrchestrator({
    baseUrl: server.url,
    internalToken: TEST_TOKEN,
    timeoutMs: 5_000,
    closeRetry: 2,
  });
  const web = await startSignalling(media, PEER_SCRIPT);
  const browser = await launchChromium();
  const pageErrors: string[] = [];
  return {
    server,
    media,
    pageErrors,
    open: async () => {
      const page = await browser.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(m.text());
      });
      const { port } = web.server.address() as { port: number };
      return openPeerPage(page, `http://127.0.0.1:${port}/`);
    },
    close: async () => {
      await browser.close();
      await web.close();
      media.close();
      await server.close();
    },
  };
}
