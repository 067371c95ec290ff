/**
 * `npm run bench:media`: what one media server does on this machine.
 *
 * 1. Creation rates through the internal HTTP API (the orchestrator client, keep-alive):
 *    routers per second, then WebRTC transports per second.
 * 2. Forwarding capacity of ONE worker: a plain-RTP producer fed from Node at a fixed
 *    bitrate, and consumers on plain RTP transports sending back to Node. Consumers are
 *    added in steps; each step sends for BENCH_STEP_SECONDS and counts what comes back.
 *    The answer is the largest count whose loss stayed at or below 1%, where a packet is
 *    lost if it never came or came more than BENCH_LATE_MS (200) after it was sent (as in
 *    `bench:voice-media`): a worker past its limit queues rather than drops, and media
 *    seconds late is as good as lost.
 *
 * Node itself sends and receives every packet, on the same cores as the worker. Each step
 * prints the worker's CPU share and the datagrams the kernel dropped at our receiving
 * sockets (/proc/net/snmp RcvbufErrors): loss with the worker well below 100% and receiver
 * drops is Node's limit, not the worker's, so the figure is a lower bound on such machines.
 * The last line is machine-readable: consumers_per_worker=<n>.
 */
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import pino from 'pino';
import { HttpMediaOrchestrator } from '../src/adapters/media/http-media-orchestrator.js';
import { loadMediasoup } from '../src/media-server/mediasoup-loader.js';
import { MEDIA_CODECS, mediaServerTestOptions } from '../src/media-server/options.js';
import { startMediaServer } from '../src/media-server/server.js';
import { describeStep, measureStep, Receivers, rtpStream, sendPaced } from './rtp.js';

const ROUTERS = Number(process.env.BENCH_ROUTERS ?? 300);
const TRANSPORTS = Number(process.env.BENCH_TRANSPORTS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const STEP = Number(process.env.BENCH_CONSUMER_STEP ?? 200);
const MAX_CONSUMERS = Number(process.env.BENCH_MAX_CONSUMERS ?? 4000);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 3);
/** One video-like stream: 50 packets/s of 1,200 bytes of payload ≈ 500 kbit/s on the wire. */
const PACKETS_PER_SECOND = Number(process.env.BENCH_PPS ?? 50);
const PAYLOAD_BYTES = Number(process.env.BENCH_PAYLOAD_BYTES ?? 1200);
const MAX_LOSS = 0.01;
const LATE_MS = Number(process.env.BENCH_LATE_MS ?? 200);
const MEDIASOUP_GUIDANCE = 500;

const logger = pino({ level: 'silent' });

/** Runs `task(i)` for i in [0, count) with `concurrency` in flight; returns seconds taken. */
async function timed(count: number, concurrency: number, task: (i: number) => Promise<unknown>) {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function creationRates(): Promise<void> {
  const token = randomBytes(16).toString('hex');
  const server = await startMediaServer(
    mediaServerTestOptions({ internalToken: token, workers: 2, workerLogLevel: 'none' }),
    logger,
  );
  const media = new HttpMediaOrchestrator({
    baseUrl: server.url,
    internalToken: token,
    timeoutMs: 10_000,
    closeRetry: 2,
  });
  try {
    const rooms = Array.from({ length: ROUTERS }, (_, i) => `bench-${i}`);
    const routerSeconds = await timed(ROUTERS, CONCURRENCY, (i) => media.createRouter(rooms[i]!));
    const transportSeconds = await timed(TRANSPORTS, CONCURRENCY, (i) =>
      media.createTransport(rooms[i % ROUTERS]!, i % 2 ? 'send' : 'recv'),
    );
    console.log(
      `routers: ${ROUTERS} in ${routerSeconds.toFixed(2)} s = ${(ROUTERS / routerSeconds).toFixed(0)}/s ` +
        `(HTTP API, 2 workers, concurrency ${CONCURRENCY})`,
    );
    console.log(
      `webrtc transports: ${TRANSPORTS} in ${transportSeconds.toFixed(2)} s = ` +
        `${(TRANSPORTS / transportSeconds).toFixed(0)}/s`,
    );
    await timed(ROUTERS, CONCURRENCY, (i) => media.closeRouter(rooms[i]!));
  } finally {
    media.close();
    await server.close();
  }
}

async function consumerCapacity(): Promise<number> {
  const { module: mediasoup } = await loadMediasoup(null);
  const worker = await mediasoup.createWorker({ logLevel: 'none' });
  const receivers = new Receivers(LATE_MS);
  const sender = dgram.createSocket('udp4');
  try {
    await receivers.open();
    const router = await worker.createRouter({ mediaCodecs: MEDIA_CODECS });
    const listenInfo = { protocol: 'udp', ip: '127.0.0.1' } as const;
    const input = await router.createPlainTransport({ listenInfo, rtcpMux: true, comedia: true });
    const ssrc = 0x1234567;
    const producer = await input.produce({
      kind: 'audio',
      rtpParameters: {
        codecs: [{ mimeType: 'audio/opus', payloadType: 100, clockRate: 48000, channels: 2 }],
        encodings: [{ ssrc }],
      },
    });
    const stream = rtpStream(input.tuple.localPort, ssrc, 100);
    const payload = randomBytes(PAYLOAD_BYTES);
    const kbps = ((PAYLOAD_BYTES + 12 + 28) * 8 * PACKETS_PER_SECOND) / 1000;
    console.log(
      `forwarding: 1 worker, 1 plain-RTP producer at ${PACKETS_PER_SECOND} packets/s × ` +
        `${PAYLOAD_BYTES} B (≈${kbps.toFixed(0)} kbit/s per consumer), steps of ${STEP}, ` +
        `${STEP_SECONDS} s each, loss limit ${MAX_LOSS * 100}% (late: over ${LATE_MS} ms)`,
    );
    let best = 0;
    let consumers = 0;
    while (consumers < MAX_CONSUMERS) {
      for (const target = consumers + STEP; consumers < target; consumers++) {
        const out = await router.createPlainTransport({
          listenInfo,
          rtcpMux: true,
          comedia: false,
        });
        await out.connect({ ip: '127.0.0.1', port: receivers.port(consumers) });
        await out.consume({ producerId: producer.id, rtpCapabilities: router.rtpCapabilities });
      }
      const step = await measureStep({
        receivers,
        worker,
        seconds: STEP_SECONDS,
        copies: consumers,
        send: (seconds) => sendPaced(sender, [stream], seconds, PACKETS_PER_SECOND, () => payload),
      });
      console.log(
        `  ${String(consumers).padStart(5)} consumers: ${describeStep(step)}, ` +
          `${((consumers * kbps) / 1000).toFixed(1)} Mbit/s out`,
      );
      if (step.loss > MAX_LOSS) break;
      best = consumers;
    }
    return best;
  } finally {
    sender.close();
    await receivers.close();
    worker.close();
  }
}

async function main(): Promise<void> {
  await creationRates();
  const perWorker = await consumerCapacity();
  const capped =
    perWorker >= MAX_CONSUMERS ? ` (stopped at BENCH_MAX_CONSUMERS=${MAX_CONSUMERS})` : '';
  console.log(
    `consumers per worker before >1% loss: ours ${perWorker}${capped}; ` +
      `mediasoup's guidance ~${MEDIASOUP_GUIDANCE}`,
  );
  console.log(`consumers_per_worker=${perWorker}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
