/**
 * Test-only: Debian's headless Chromium for the real-media tests, with fake camera and
 * microphone, no background traffic (this machine reaches no other host) and loopback ICE.
 */
import { existsSync } from 'node:fs';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { mediaSkipReason } from './harness.js';

export const CHROMIUM = process.env.ROOMS_TEST_CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  // Lets WebRTC use the loopback candidates the media server announces here.
  '--allow-loopback-in-peer-connection',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** False when the worker and Chromium are there; else why the test skips (never in CI). */
export function browserSkipReason(): string | false {
  const media = mediaSkipReason();
  if (media) return media;
  if (existsSync(CHROMIUM)) return false;
  const hint = `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  if (process.env.CI === 'true') throw new Error(`browser test must not skip in CI: ${hint}`);
  return hint;
}

/** A page script bundled for the browser (mediasoup-client included), as one IIFE. */
export async function bundlePage(entry: string): Promise<string> {
  const bundle = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  });
  return bundle.outputFiles[0]?.text ?? '';
}

/** The page that loads `/peer.js`. */
export const PEER_PAGE = '<!doctype html><title>peer</title><script src="/peer.js"></script>';
