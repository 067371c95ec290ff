/**
 * `npm run bench:simulcast`: what a meeting viewer pulls downstream with simulcast and the
 * server-chosen layers, against the same cameras sent in one layer.
 *
 * One media server (one worker, in this process). BENCH_SENDERS (3) cameras, each an FFmpeg
 * encoding a 640×360 test pattern at 30 fps twice, as the client SDK sends a camera
 * (CAMERA_SIMULCAST: 320 and 640 pixels wide, each at its maxBitrate). Each camera feeds two
 * producers: a simulcast one (both layers) and a single-layer one (the 640 layer only: a
 * camera without simulcast). A viewer is a plain transport whose RTP lands on a UDP socket
 * of this process, which counts the bytes: what the viewer would download. The viewer sends
 * no bandwidth feedback, so each consumer forwards the layer its preference names (a
 * browser's estimate may take a smaller one, never a larger).
 *
 * Views, each with 9 tiles (the cameras repeated to fill them):
 * - grid: 9 tiles of at most 320 pixels, each asking the layer the meeting's ladder gives
 *   (`meeting.consumer.preferences {max_width}` → layerForWidth), through the media
 *   server's internal API as the node does;
 * - speaker: one tile 1,000 pixels wide and 8 of 320;
 * - single: the same 9 tiles of the single-layer producers (the baseline).
 * All three views receive at once, so each window compares them on the same pictures (on
 * this 2-core machine the six encoders do not always reach their bitrates); BENCH_ROUNDS
 * (3) windows of BENCH_SECONDS (6), after the layers have switched (a key frame every 2 s),
 * and the medians of the windows' ratios.
 *
 * Last lines machine-readable: `simulcast_grid_downstream_ratio=` (grid / single; the goal
 * is ≤ 0.4), `simulcast_speaker_downstream_ratio=`, and the kbit/s medians.
 */
import type { ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import type { types } from 'mediasoup';
import { CAMERA_SIMULCAST } from '../packages/client/src/media/camera-layers.js';
import { layerForWidth } from '../src/edge/room-media/layers.js';
import { ffmpegSimulcastFeed, feedRtpParameters } from '../src/media-server/testing/ffmpeg-feed.js';
import { call, startTestMediaServer } from '../src/media-server/testing/harness.js';
import { plainSendTransport } from '../src/media-server/testing/plain-rtp.js';
import { median } from './load.js';

const SENDERS = Number(process.env.BENCH_SENDERS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const TILES = 9;
const GRID_TILE_WIDTH = 320;
const SPEAKER_TILE_WIDTH = 1_000;
/** The SDK's layers' bitrates, smallest first (what a browser is allowed to send). */
const BITRATES = CAMERA_SIMULCAST.map((layer) => layer.maxBitrate);

/**
 * The router's capabilities without transport-cc, abs-send-time and REMB: a viewer that
 * sends no bandwidth feedback, so that what it gets is the layers the preferences chose
 * (with them, the transport would hold every consumer to its initial 600 kbit/s estimate).
 */
function withoutBandwidthEstimation(caps: types.RtpCapabilities): types.RtpCapabilities {
  const estimation = /transport-wide-cc|abs-send-time/;
  return {
    codecs: caps.codecs?.map((codec) => ({
      ...codec,
      rtcpFeedback: codec.rtcpFeedback?.filter(
        (f) => !['transport-cc', 'goog-remb'].includes(f.type),
      ),
    })),
    headerExtensions: caps.headerExtensions?.filter((ext) => !estimation.test(ext.uri)),
  };
}

/** A UDP socket on loopback; its port and a counter of the bytes it received. */
async function counter(): Promise<{ port: number; bytes: () => number; close: () => void }> {
  const socket = dgram.createSocket('udp4');
  let bytes = 0;
  socket.on('message', (packet) => (bytes += packet.length));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, bytes: () => bytes, close: () => socket.close() };
}

/**
 * Two UDP sockets FFmpeg sends its two layers to, relayed from one socket to `to` (a
 * comedia transport learns one sender) and the large layer alone to `single`.
 */
async function relay(to: number, single: number) {
  const out = dgram.createSocket('udp4');
  const outSingle = dgram.createSocket('udp4');
  const inputs = [dgram.createSocket('udp4'), dgram.createSocket('udp4')];
  for (const [i, input] of inputs.entries()) {
    input.on('message', (packet) => {
      out.send(packet, to, '127.0.0.1');
      if (i === 1) outSingle.send(packet, single, '127.0.0.1');
    });
    await new Promise<void>((resolve) => input.bind(0, '127.0.0.1', resolve));
  }
  return {
    ports: inputs.map((s) => s.address().port),
    close: () => [out, outSingle, ...inputs].forEach((s) => s.close()),
  };
}

const server = await startTestMediaServer({ workers: 1 });
const feeders: ChildProcess[] = [];
const closers: (() => void)[] = [];
try {
  const room = 'bench-simulcast';
  const router = (await server.registry.ensureRouter(room)).entry;
  const simulcast: string[] = [];
  const single: string[] = [];
  for (let i = 0; i < SENDERS; i++) {
    const ssrcs = [20_000 + 2 * i, 20_001 + 2 * i];
    const layered = await plainSendTransport(server, room, `camera-${i}`);
    const alone = await plainSendTransport(server, room, `single-${i}`);
    const video = feedRtpParameters('video', ssrcs[0]!);
    const { producer } = await server.registry.createProducer(
      layered.id,
      'video',
      { ...video, encodings: ssrcs.map((ssrc) => ({ ssrc })) },
      false,
      {},
    );
    simulcast.push(producer.id);
    const one = await server.registry.createProducer(
      alone.id,
      'video',
      feedRtpParameters('video', ssrcs[1]!),
      false,
      {},
    );
    single.push(one.producer.id);
    const relayed = await relay(layered.port, alone.port);
    closers.push(relayed.close);
    feeders.push(
      ffmpegSimulcastFeed(
        relayed.ports.map((port, layer) => ({
          port,
          ssrc: ssrcs[layer]!,
          bitrate: BITRATES[layer]!,
        })),
      ),
    );
  }

  /** A viewer of 9 tiles of `producers`, tile i at `widths[i]` pixels: the bytes it received. */
  async function viewer(producers: string[], widths: number[]) {
    const received = await counter();
    closers.push(received.close);
    const entry = await server.registry.createPlainTransport(router, null, 'recv');
    await entry.transport.connect({ ip: '127.0.0.1', port: received.port });
    for (let tile = 0; tile < TILES; tile++) {
      const { consumer } = await server.registry.createConsumer(
        entry.transport.id,
        producers[tile % producers.length]!,
        withoutBandwidthEstimation(router.router.rtpCapabilities),
      );
      const answer = await call(
        server,
        'POST',
        `/internal/v1/consumers/${consumer.id}/preferences`,
        {
          spatial_layer: layerForWidth(widths[tile]!),
          paused: false,
        },
      );
      if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    }
    return received.bytes;
  }

  const grid = Array.from({ length: TILES }, () => GRID_TILE_WIDTH);
  const views = {
    grid: await viewer(simulcast, grid),
    speaker: await viewer(simulcast, [SPEAKER_TILE_WIDTH, ...grid.slice(1)]),
    single: await viewer(single, grid),
  };
  const names = Object.keys(views) as (keyof typeof views)[];
  await sleep(2_500); // the next key frame of each layer: every consumer forwards
  const kbps: Record<keyof typeof views, number[]> = { grid: [], speaker: [], single: [] };
  const ratios = { grid: [] as number[], speaker: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    // Every view over the same window: the same pictures, however busy the encoders are.
    const before = names.map((name) => views[name]());
    await sleep(SECONDS * 1_000);
    names.forEach((name, i) =>
      kbps[name].push(((views[name]() - before[i]!) * 8) / SECONDS / 1_000),
    );
    const last = (name: keyof typeof views) => kbps[name].at(-1)!;
    ratios.grid.push(last('grid') / last('single'));
    ratios.speaker.push(last('speaker') / last('single'));
    console.log(
      `round ${round + 1}: ` + names.map((n) => `${n} ${last(n).toFixed(0)} kbit/s`).join(', '),
    );
  }
  const m = (name: keyof typeof views) => median(kbps[name]);
  const ratio = (name: keyof typeof ratios) => median(ratios[name]).toFixed(2);
  console.log(
    `a viewer of ${TILES} tiles (${SENDERS} cameras, layers ${BITRATES.join(' / ')} bit/s): ` +
      `grid ${m('grid').toFixed(0)} kbit/s, speaker view ${m('speaker').toFixed(0)} kbit/s, ` +
      `without simulcast ${m('single').toFixed(0)} kbit/s; medians of ${ROUNDS} rounds`,
  );
  console.log(`simulcast_grid_downstream_ratio=${ratio('grid')}`);
  console.log(`simulcast_speaker_downstream_ratio=${ratio('speaker')}`);
  console.log(`simulcast_grid_kbps=${m('grid').toFixed(0)}`);
  console.log(`simulcast_single_layer_kbps=${m('single').toFixed(0)}`);
} finally {
  for (const f of feeders) f.kill('SIGKILL');
  for (const close of closers) close();
  await server.close();
}
