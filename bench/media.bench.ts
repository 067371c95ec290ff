/**
 * `npm run bench:media`: what one media server does on this machine.
 *
 * 1. Creation rates through the internal HTTP API (the orchestrator client, keep-alive):
 *    routers per second, then WebRTC transports per second.
 * 2. Forwarding capacity of ONE worker: a plain-RTP producer fed from Node at a fixed
 *    bitrate, and consumers on plain RTP transports sending back to Node. Consumers are
 *    added in steps; each step sends for BENCH_STEP_SECONDS and counts what comes back.
 *    The answer is the largest count whose loss stayed at or below 1%.
 *
 * Node itself sends and receives every packet, on the same cores as the worker. Each step
 * prints the worker's CPU share and the datagrams the kernel dropped at our receiving
 * sockets (/proc/net/snmp RcvbufErrors): loss with the worker well below 100% and receiver
 * drops is Node's limit, not the worker's, so the figure is a lower bound on such machines.
 * The last line is machine-readable: consumers_per_worker=<n>.
 */
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { types } from 'mediasoup';
import pino from 'pino';
import { HttpMediaOrchestrator } from '../src/adapters/media/http-media-orchestrator.js';
import { loadMediasoup } from '../src/media-server/mediasoup-loader.js';
import { MEDIA_CODECS, mediaServerTestOptions } from '../src/media-server/options.js';
import { startMediaServer } from '../src/media-server/server.js';

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
/** Two receiving threads use whatever CPU the worker and the sender leave. */
const RECEIVER_THREADS = 2;
const SOCKETS_PER_THREAD = 2;
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

/** Counts RTP packets coming back, in worker threads (bench/media-receiver.mjs). */
class Receivers {
  readonly #counter = new SharedArrayBuffer(4);
  readonly #threads: Worker[] = [];
  #ports: number[] = [];

  async open(): Promise<void> {
    for (let t = 0; t < RECEIVER_THREADS; t++) {
      const thread = new Worker(new URL('./media-receiver.mjs', import.meta.url), {
        workerData: { sockets: SOCKETS_PER_THREAD, counter: this.#counter },
      });
      const { ports } = await new Promise<{ ports: number[] }>((resolve, reject) => {
        thread.once('message', resolve);
        thread.once('error', reject);
      });
      this.#threads.push(thread);
      this.#ports.push(...ports);
    }
  }

  get packets(): number {
    return Atomics.load(new Int32Array(this.#counter), 0);
  }

  reset(): void {
    Atomics.store(new Int32Array(this.#counter), 0, 0);
  }

  port(i: number): number {
    return this.#ports[i % this.#ports.length]!;
  }

  async close(): Promise<void> {
    await Promise.all(this.#threads.map((t) => t.terminate()));
  }
}

/** Sequence number and timestamp carry on across sends: a reset would look like loss. */
interface Stream {
  readonly ssrc: number;
  seq: number;
  timestamp: number;
}

/** Sends the producer's RTP at a steady rate (catching up on timer jitter). */
function sendStream(socket: dgram.Socket, port: number, stream: Stream, seconds: number) {
  const payload = randomBytes(PAYLOAD_BYTES);
  const started = Date.now();
  let sent = 0;
  return new Promise<number>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = (Date.now() - started) / 1000;
      const due = Math.min(Math.floor(elapsed * PACKETS_PER_SECOND), seconds * PACKETS_PER_SECOND);
      for (; sent < due; sent++) {
        const header = Buffer.alloc(12);
        header[0] = 0x80;
        header[1] = 100;
        header.writeUInt16BE(stream.seq++ & 0xffff, 2);
        header.writeUInt32BE((stream.timestamp += 960) >>> 0, 4);
        header.writeUInt32BE(stream.ssrc, 8);
        socket.send(Buffer.concat([header, payload]), port, '127.0.0.1');
      }
      if (elapsed >= seconds) {
        clearInterval(timer);
        resolve(sent);
      }
    }, 5);
  });
}

/**
 * Datagrams the kernel dropped because a receiving socket's buffer was full (Linux,
 * /proc/net/snmp): loss counted here happened at our Node receivers, not in the worker.
 */
function udpBufferDrops(): number | null {
  try {
    const lines = readFileSync('/proc/net/snmp', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('Udp:'));
    const names = lines[0]?.split(/\s+/) ?? [];
    const values = lines[1]?.split(/\s+/) ?? [];
    const value = Number(values[names.indexOf('RcvbufErrors')]);
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

async function workerCpuMs(worker: types.Worker): Promise<number> {
  const usage = await worker.getResourceUsage();
  return usage.ru_utime + usage.ru_stime;
}

async function consumerCapacity(): Promise<number> {
  const { module: mediasoup } = await loadMediasoup(null);
  const worker = await mediasoup.createWorker({ logLevel: 'none' });
  const receivers = new Receivers();
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
    const inputPort = input.tuple.localPort;
    const stream: Stream = { ssrc, seq: 0, timestamp: 0 };
    const kbps = ((PAYLOAD_BYTES + 12 + 28) * 8 * PACKETS_PER_SECOND) / 1000;
    console.log(
      `forwarding: 1 worker, 1 plain-RTP producer at ${PACKETS_PER_SECOND} packets/s × ` +
        `${PAYLOAD_BYTES} B (≈${kbps.toFixed(0)} kbit/s per consumer), steps of ${STEP}, ` +
        `${STEP_SECONDS} s each, loss limit ${MAX_LOSS * 100}%`,
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
      // Warm-up so that every consumer has seen the stream before counting.
      await sendStream(sender, inputPort, stream, 0.3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      receivers.reset();
      const cpuBefore = await workerCpuMs(worker);
      const dropsBefore = udpBufferDrops();
      const started = Date.now();
      const sent = await sendStream(sender, inputPort, stream, STEP_SECONDS);
      await new Promise((resolve) => setTimeout(resolve, 500)); // drain
      const cpu = ((await workerCpuMs(worker)) - cpuBefore) / (Date.now() - started);
      const expected = sent * consumers;
      const loss = Math.max(0, 1 - receivers.packets / expected);
      const dropsAfter = udpBufferDrops();
      const drops =
        dropsBefore === null || dropsAfter === null
          ? ''
          : `, receiver drops ${dropsAfter - dropsBefore}`;
      console.log(
        `  ${String(consumers).padStart(5)} consumers: ${receivers.packets}/${expected} packets, ` +
          `loss ${(loss * 100).toFixed(2)}%, worker CPU ${(cpu * 100).toFixed(0)}%, ` +
          `${((consumers * kbps) / 1000).toFixed(1)} Mbit/s out${drops}`,
      );
      if (loss > MAX_LOSS) break;
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
