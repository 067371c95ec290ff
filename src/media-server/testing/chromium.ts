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

/**
 * Chromium with the fake devices: its microphone beeps, or plays `microphoneFile` (a WAV,
 * looped) instead, say silence for a member who does not talk. `executable`: another way to
 * start it (a wrapper that runs it in a network namespace); `args`: more flags.
 */
export function launchChromium(
  options: { microphoneFile?: string; executable?: string; args?: readonly string[] } = {},
): Promise<Browser> {
  const file = options.microphoneFile;
  const args = [
    ...CHROMIUM_ARGS,
    ...(file ? [`--use-file-for-fake-audio-capture=${file}`] : []),
    ...(options.args ?? []),
  ];
  return chromium.launch({ executablePath: options.executable ?? CHROMIUM, args });
}

/** A WAV of `seconds` of silence (48 kHz, 16-bit mono): a fake microphone that never talks. */
export function silentWav(seconds = 1): Buffer {
  return wavOf(new Int16Array(48_000 * seconds));
}

/**
 * A WAV of someone talking, as the media server's speaker detector hears speech (48 kHz,
 * 16-bit mono, 2 s, looped by Chromium): four syllables of 350 ms, each rising and falling
 * in loudness and gliding in pitch, with 150 ms pauses. Chromium's own fake microphone only
 * beeps, at one loudness, which the detector (it scores loudness above the softest it heard)
 * is slow to tell from silence.
 */
export function talkingWav(): Buffer {
  const rate = 48_000;
  const samples = new Int16Array(rate * 2);
  const syllable = rate * 0.35;
  const cycle = rate * 0.5;
  let phase = 0;
  for (let i = 0; i < samples.length; i++) {
    const at = i % cycle;
    if (at >= syllable) continue;
    const pitch = 180 + 40 * Math.floor(i / cycle) + (120 * at) / syllable;
    phase += (2 * Math.PI * pitch) / rate;
    const loudness = Math.sin((Math.PI * at) / syllable); // 0 → 1 → 0
    const voice = Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.25 * Math.sin(3 * phase);
    samples[i] = Math.round(9_000 * loudness * voice);
  }
  return wavOf(samples);
}

/** A PCM WAV file of `samples` (48 kHz, 16-bit mono). */
function wavOf(samples: Int16Array): Buffer {
  const rate = 48_000;
  const data = samples.length * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16); // the fmt chunk's size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32); // bytes per frame
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36);
  header.writeUInt32LE(data, 40);
  const body = Buffer.alloc(data);
  samples.forEach((sample, i) => body.writeInt16LE(sample, i * 2));
  return Buffer.concat([header, body]);
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
