/**
 * What the forwarding benches (`bench:media`, `bench:voice-media`) share: RTP streams fed
 * from Node at a steady rate, receiving threads that count what a worker sends back, and
 * one measured step (send for a while, count, compare with what should have arrived), with
 * the worker's CPU share and the datagrams the kernel dropped at our receiving sockets.
 */
import type dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { types } from 'mediasoup';

/**
 * Counts RTP packets coming back, in worker threads (bench/media-receiver.mjs). With
 * `lateMs`, a packet that arrives more than that after it was sent is counted apart, as
 * late: a listener's jitter buffer would have dropped it.
 */
export class Receivers {
  readonly #counter = new SharedArrayBuffer(8);
  readonly #threads: Worker[] = [];
  #ports: number[] = [];

  /** Two receiving threads use whatever CPU the worker and the sender leave. */
  constructor(
    readonly lateMs: number | null = null,
    private readonly threads = 2,
    private readonly socketsPerThread = 2,
  ) {}

  async open(): Promise<void> {
    for (let t = 0; t < this.threads; t++) {
      const thread = new Worker(new URL('./media-receiver.mjs', import.meta.url), {
        workerData: {
          sockets: this.socketsPerThread,
          counter: this.#counter,
          lateMs: this.lateMs,
        },
      });
      const { ports } = await new Promise<{ ports: number[] }>((resolve, reject) => {
        thread.once('message', resolve);
        thread.once('error', reject);
      });
      this.#threads.push(thread);
      this.#ports.push(...ports);
    }
  }

  /** Packets in time (all of them without `lateMs`). */
  get packets(): number {
    return Atomics.load(new Int32Array(this.#counter), 0);
  }

  get late(): number {
    return Atomics.load(new Int32Array(this.#counter), 1);
  }

  reset(): void {
    Atomics.store(new Int32Array(this.#counter), 0, 0);
    Atomics.store(new Int32Array(this.#counter), 1, 0);
  }

  /** The receiving ports in turn: transport `i` sends to `port(i)`. */
  port(i: number): number {
    return this.#ports[i % this.#ports.length]!;
  }

  async close(): Promise<void> {
    await Promise.all(this.#threads.map((t) => t.terminate()));
  }
}

/**
 * One RTP stream into a producer's transport. Sequence number and timestamp carry on
 * across sends: a reset would look like loss.
 */
export interface RtpStream {
  readonly port: number;
  readonly ssrc: number;
  readonly payloadType: number;
  /** With it, each packet carries an ssrc-audio-level extension (RFC 6464) under this id. */
  readonly audioLevelExtId?: number;
  seq: number;
  timestamp: number;
}

export function rtpStream(
  port: number,
  ssrc: number,
  payloadType: number,
  audioLevelExtId?: number,
): RtpStream {
  return {
    port,
    ssrc,
    payloadType,
    ...(audioLevelExtId === undefined ? {} : { audioLevelExtId }),
    seq: 0,
    timestamp: 0,
  };
}

/** The stream's next packet (20 ms of 48 kHz later than the last one). */
export function nextPacket(stream: RtpStream, payload: Buffer): Buffer {
  const header = Buffer.alloc(12);
  const ext = stream.audioLevelExtId;
  header[0] = ext === undefined ? 0x80 : 0x90; // version 2, extension bit when levels go along
  header[1] = stream.payloadType;
  header.writeUInt16BE(stream.seq++ & 0xffff, 2);
  header.writeUInt32BE((stream.timestamp += 960) >>> 0, 4);
  header.writeUInt32BE(stream.ssrc, 8);
  if (ext === undefined) return Buffer.concat([header, payload]);
  // RFC 8285 one-byte block: one element (id, length 1) with voice at -10 dBov, padded.
  const extension = Buffer.from([0xbe, 0xde, 0x00, 0x01, ext << 4, 0x80 | 10, 0, 0]);
  return Buffer.concat([header, extension, payload]);
}

/**
 * Sends every stream at `packetsPerSecond` for `seconds` (catching up on timer jitter);
 * `payload(n)` is the n-th packet's payload (at least 8 bytes), sent with its first 8
 * bytes replaced by the send time (see {@link Receivers}). Resolves with the packets sent
 * per stream.
 */
export function sendPaced(
  socket: dgram.Socket,
  streams: readonly RtpStream[],
  seconds: number,
  packetsPerSecond: number,
  payload: (n: number) => Buffer,
): Promise<number> {
  const started = Date.now();
  let sent = 0;
  return new Promise<number>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = (Date.now() - started) / 1000;
      const due = Math.min(Math.floor(elapsed * packetsPerSecond), seconds * packetsPerSecond);
      for (; sent < due; sent++) {
        const body = Buffer.from(payload(sent));
        body.writeDoubleBE(performance.timeOrigin + performance.now(), 0);
        for (const stream of streams) {
          socket.send(nextPacket(stream, body), stream.port, '127.0.0.1');
        }
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
export function udpBufferDrops(): number | null {
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

export interface StepResult {
  /** In time (see {@link Receivers}). */
  readonly received: number;
  /** Arrived too late; null when lateness is not checked. */
  readonly late: number | null;
  readonly expected: number;
  /** 0..1 */
  readonly loss: number;
  /** The worker's CPU time over the step's wall time (1 = one core). */
  readonly workerCpu: number;
  /** Kernel drops at receiving sockets during the step; null off Linux. */
  readonly receiverDrops: number | null;
  /** How long packets kept arriving after the last was sent: the backlog in the worker. */
  readonly tailMs: number;
}

const QUIET_MS = 200;
const MAX_TAIL_MS = 10_000;

/**
 * Waits until no packet has arrived for QUIET_MS; resolves with how long they kept coming.
 * A loaded worker forwards from a queue: packets sent before a reset that arrive after it
 * would count for the next window (more received than sent, hiding loss).
 */
async function settle(receivers: Receivers): Promise<number> {
  const started = Date.now();
  const arrived = () => receivers.packets + receivers.late;
  let last = arrived();
  let lastChange = started;
  while (Date.now() - lastChange < QUIET_MS && Date.now() - started < MAX_TAIL_MS) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = arrived();
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    }
  }
  return lastChange - started;
}

/**
 * One measured step: a short warm-up so that every consumer has seen its streams, then
 * `send(seconds)` (resolving with the packets sent, all streams together), a drain, and
 * the count of what came back in time against `sent × copies` (each packet forwarded to
 * `copies` receivers): loss is what never came plus what came late.
 */
export async function measureStep(opts: {
  readonly receivers: Receivers;
  readonly worker: types.Worker;
  readonly seconds: number;
  readonly copies: number;
  readonly send: (seconds: number) => Promise<number>;
}): Promise<StepResult> {
  const { receivers, worker } = opts;
  await opts.send(0.3);
  await settle(receivers);
  receivers.reset();
  const cpuBefore = await workerCpuMs(worker);
  const dropsBefore = udpBufferDrops();
  const started = Date.now();
  const sent = await opts.send(opts.seconds);
  const tailMs = await settle(receivers);
  const workerCpu = ((await workerCpuMs(worker)) - cpuBefore) / (Date.now() - started);
  const dropsAfter = udpBufferDrops();
  const received = receivers.packets;
  const expected = sent * opts.copies;
  return {
    received,
    late: receivers.lateMs === null ? null : receivers.late,
    expected,
    loss: Math.max(0, 1 - received / expected),
    workerCpu,
    receiverDrops: dropsBefore === null || dropsAfter === null ? null : dropsAfter - dropsBefore,
    tailMs,
  };
}

/** One line: packets in time of those expected, late ones, loss, worker CPU, drops, tail. */
export function describeStep(r: StepResult): string {
  const drops = r.receiverDrops === null ? '' : `, receiver drops ${r.receiverDrops}`;
  const late = r.late === null ? '' : ` in time (${r.late} late)`;
  return (
    `${r.received}/${r.expected} packets${late}, loss ${(r.loss * 100).toFixed(2)}%, ` +
    `worker CPU ${(r.workerCpu * 100).toFixed(0)}%${drops}, tail ${r.tailMs} ms`
  );
}
