/**
 * `npm run bench:dtx`: what a silent microphone costs with the SDK's Opus settings
 * (`MICROPHONE_OPUS` of packages/client/src/media/transports.ts: DTX and in-band FEC) against
 * Opus without them, sent by headless Chromium through mediasoup-client to the media server
 * (one worker, free ports, loopback).
 *
 * Each round opens one page per case, in an order that alternates: a WebAudio microphone
 * that is digitally silent (a quiet seat) or a steady 440 Hz tone (someone talking, as far as
 * the encoder can tell), sent with or without DTX. After BENCH_WARMUP_SECONDS (2) the page's
 * outbound-rtp bytes and packets are read, and again BENCH_SECONDS (6) later: the rate over
 * that window is the round's figure. Medians over BENCH_ROUNDS (5) rounds.
 *
 * The gain is the silent seat's bitrate without DTX over its bitrate with it; the tone's
 * ratio shows that DTX leaves speech alone. Every listener of a room receives what its seats
 * send, so a silent seat's bytes are multiplied by the room's audience. Chromium shares this
 * 2-core machine with the worker; bitrates are the encoder's, not the machine's.
 *
 * Last lines machine-readable: `dtx_silence_gain=` (bytes), `dtx_silence_packet_gain=`
 * (packets: what each listener's forwarding costs the worker), `dtx_silence_kbps=`,
 * `no_dtx_silence_kbps=`, `dtx_tone_ratio=`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { browserSkipReason } from '../src/media-server/testing/chromium.js';
import {
  callPeer,
  startPeerPages,
  type PeerPages,
} from '../src/media-server/testing/peer-pages.js';
import { MICROPHONE_OPUS } from '../packages/client/src/media/transports.js';
import { median } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);

interface Case {
  readonly name: string;
  readonly tone: boolean;
  readonly codecOptions: Record<string, boolean>;
}

const CASES: readonly Case[] = [
  { name: 'silence, SDK (DTX)', tone: false, codecOptions: MICROPHONE_OPUS },
  { name: 'silence, no DTX', tone: false, codecOptions: {} },
  { name: 'tone, SDK (DTX)', tone: true, codecOptions: MICROPHONE_OPUS },
  { name: 'tone, no DTX', tone: true, codecOptions: {} },
];

/** One page sending one case; resolves with its bitrate (kbit/s) and packet rate. */
async function measure(peers: PeerPages, c: Case, round: number) {
  const page = await peers.open();
  try {
    const { tone, codecOptions } = c;
    await callPeer(page, 'sendAudio', `dtx-${round}-${CASES.indexOf(c)}`, 'seat', {
      tone,
      codecOptions,
    });
    const sent = () => callPeer(page, 'sent');
    await sleep(WARMUP_SECONDS * 1000);
    const before = await sent();
    await sleep(SECONDS * 1000);
    const after = await sent();
    return {
      kbps: ((after.bytes - before.bytes) * 8) / 1000 / SECONDS,
      pps: (after.packets - before.packets) / SECONDS,
    };
  } finally {
    await page.close();
  }
}

async function main(): Promise<void> {
  const skip = browserSkipReason();
  if (skip) throw new Error(`bench:dtx needs the media worker and Chromium: ${skip}`);
  const peers = await startPeerPages({ workers: 1 });
  try {
    const kbps = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
    const pps = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
    for (let round = 1; round <= ROUNDS; round += 1) {
      // The order alternates, so drift in the machine's load falls on every case alike.
      const order = round % 2 === 0 ? [...CASES].reverse() : CASES;
      const line: string[] = [];
      for (const c of order) {
        const m = await measure(peers, c, round);
        kbps.get(c.name)!.push(m.kbps);
        pps.get(c.name)!.push(m.pps);
        line.push(`${c.name} ${m.kbps.toFixed(2)} kbit/s ${m.pps.toFixed(1)} pkt/s`);
      }
      console.log(`round ${round}: ${line.join('; ')}`);
    }
    const mid = (name: string) => median(kbps.get(name)!);
    for (const c of CASES) {
      console.log(
        `${c.name}: median ${mid(c.name).toFixed(2)} kbit/s, ` +
          `${median(pps.get(c.name)!).toFixed(1)} packets/s over ${ROUNDS} rounds`,
      );
    }
    const silent = mid('silence, SDK (DTX)');
    const silentPlain = mid('silence, no DTX');
    const gain = silentPlain / Math.max(silent, 0.001);
    const toneRatio = mid('tone, SDK (DTX)') / Math.max(mid('tone, no DTX'), 0.001);
    // The worker's cost is per packet forwarded to each listener, not per byte.
    const packetGain =
      median(pps.get('silence, no DTX')!) / Math.max(median(pps.get('silence, SDK (DTX)')!), 0.001);
    console.log(
      `a silent seat sends ${gain.toFixed(1)}× less with DTX (${silent.toFixed(2)} vs ` +
        `${silentPlain.toFixed(2)} kbit/s); a talking one ${toneRatio.toFixed(2)}× of its ` +
        `rate without (DTX leaves speech alone)`,
    );
    console.log(`dtx_silence_gain=${gain.toFixed(1)}`);
    console.log(`dtx_silence_packet_gain=${packetGain.toFixed(1)}`);
    console.log(`dtx_silence_kbps=${silent.toFixed(2)}`);
    console.log(`no_dtx_silence_kbps=${silentPlain.toFixed(2)}`);
    console.log(`dtx_tone_ratio=${toneRatio.toFixed(2)}`);
  } finally {
    await peers.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
