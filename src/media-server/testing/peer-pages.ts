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
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForFunction(() => (globalThis as { peerReady?: boolean }).peerReady === true);
      return page;
    },
    close: async () => {
      await browser.close();
      await web.close();
      media.close();
      await server.close();
    },
  };
}
