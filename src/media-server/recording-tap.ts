/**
 * One recorded track's plumbing: a plain RTP transport on the producer's router, a paused
 * consumer on it, and an FFmpeg process listening on a pair of loopback UDP ports that
 * copies the track into its file (src/media-server/recorder.ts decides what is recorded).
 *
 * The ports are found free and let go before FFmpeg binds them, so something else may take
 * one meanwhile (a transport of this server, another process): FFmpeg then fails to bind and
 * exits. A tap counts as open only once the kernel's UDP table shows FFmpeg's own sockets on
 * both ports; when FFmpeg exits first, it is opened again on other ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { types } from 'mediasoup';
import { errors } from '../shared/error-codes.js';

export interface Tap {
  readonly transport: types.PlainTransport;
  readonly consumer: types.Consumer;
  readonly ffmpeg: ChildProcess;
  /** Where FFmpeg reads the track's RTP (to see that it read it all before it goes). */
  readonly rtpPort: number;
  readonly exited: Promise<void>;
}

export interface TapOptions {
  readonly router: types.Router;
  readonly producer: types.Producer;
  /** The SDP file FFmpeg reads, and the file it writes. */
  readonly sdpFile: string;
  readonly outFile: string;
  /** The FFmpeg binary. */
  readonly ffmpeg: string;
  readonly logger: Logger;
  /** Two ports, the first even (RTP, then RTCP): free ones unless a test says otherwise. */
  readonly ports?: () => Promise<[number, number]>;
}

/**
 * How long FFmpeg may take to listen for RTP after its start. A loaded machine took more
 * than 5 s; a track resumed before FFmpeg listens loses its start (and a camera its first
 * key frame) while its start offset says it was recorded.
 */
const FFMPEG_LISTEN_MS = 30_000;
/** FFmpeg slower than this to listen is logged (a sign of a machine short of CPU). */
const FFMPEG_SLOW_MS = 5_000;
/** How many port pairs a tap tries before it gives up. */
const TAP_ATTEMPTS = 5;
/** How long FFmpeg gets to write what it read last, once its socket's queue is empty. */
const FFMPEG_DRAIN_MS = 200;
/**
 * How long FFmpeg may take to read what waits on its socket at a stop: on a busy machine
 * it runs a second or more behind, and a kill before it read that cut the file short.
 */
const FFMPEG_BACKLOG_MS = 5_000;

/** Opens the track's tap, its consumer still paused: FFmpeg listens when this resolves. */
export async function openTap(options: TapOptions): Promise<Tap> {
  for (let attempt = 1; attempt <= TAP_ATTEMPTS; attempt++) {
    const [rtpPort, rtcpPort] = await (options.ports ?? freeUdpPair)();
    const tap = await tapOn(options, rtpPort, rtcpPort);
    // RTP sent before FFmpeg listens is lost (a key frame with it): wait until it does.
    const startedAt = Date.now();
    const state = await untilListening(tap.ffmpeg, [rtpPort, rtcpPort]);
    const tookMs = Date.now() - startedAt;
    if (state === 'listening') {
      if (tookMs > FFMPEG_SLOW_MS) {
        options.logger.warn(
          { producerId: options.producer.id, tookMs },
          'FFmpeg was slow to listen',
        );
      }
      return tap;
    }
    tap.ffmpeg.kill('SIGKILL'); // exited already, or still not listening
    tap.consumer.close();
    tap.transport.close();
    if (state === 'late') {
      throw errors.MEDIA_SERVER_ERROR.withCause(
        new Error(`FFmpeg did not listen within ${FFMPEG_LISTEN_MS} ms`),
      );
    }
    options.logger.warn(
      { producerId: options.producer.id, rtpPort, attempt },
      'FFmpeg could not listen on its ports (taken meanwhile): trying others',
    );
  }
  throw errors.MEDIA_SERVER_ERROR.withCause(new Error('FFmpeg could not listen for a track'));
}

/**
 * Ends a tap: no more RTP, then FFmpeg goes. Its file is whole already (every packet was
 * flushed); a signal asking it to finish would wait for a packet that a paused track never
 * sends (FFmpeg only hears one between packets).
 */
export async function closeTap(tap: Tap): Promise<void> {
  tap.consumer.close();
  tap.transport.close();
  await untilRead(tap.rtpPort, FFMPEG_BACKLOG_MS);
  await sleep(FFMPEG_DRAIN_MS);
  tap.ffmpeg.kill('SIGKILL');
  await tap.exited;
}

async function tapOn(options: TapOptions, rtpPort: number, rtcpPort: number): Promise<Tap> {
  const { router, producer } = options;
  const transport = await router.createPlainTransport({
    listenInfo: { protocol: 'udp', ip: '127.0.0.1' },
    rtcpMux: false,
    comedia: false,
  });
  await transport.connect({ ip: '127.0.0.1', port: rtpPort, rtcpPort });
  const consumer = await transport.consume({
    producerId: producer.id,
    rtpCapabilities: router.rtpCapabilities,
    paused: true,
  });
  await writeFile(options.sdpFile, sdpOf(consumer, rtpPort, rtcpPort));
  const ffmpeg = spawn(
    options.ffmpeg,
    [
      ...['-nostdin', '-loglevel', 'error'],
      ...['-protocol_whitelist', 'file,udp,rtp', '-fflags', '+genpts'],
      ...['-i', options.sdpFile, '-map', '0', '-c', 'copy', '-flush_packets', '1'],
      // Every packet reaches the file at once, in a form readable without an ending:
      // Ogg pages of 200 ms; a live WebM (clusters of 100 ms, no cues, as a browser's
      // MediaRecorder writes; a muxer holds a page or a cluster until it is complete).
      // So a stop is a kill, and a server's death loses at most that last page.
      ...(producer.kind === 'audio'
        ? ['-page_duration', '200000', '-f', 'ogg']
        : ['-live', '1', '-cluster_time_limit', '100', '-f', 'webm']),
      ...['-y', options.outFile],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  ffmpeg.stderr?.on('data', (chunk: Buffer) =>
    options.logger.warn(
      { producerId: producer.id, ffmpeg: chunk.toString('utf8').trim() },
      'ffmpeg',
    ),
  );
  const exited = new Promise<void>((resolve) => {
    ffmpeg.once('exit', () => resolve());
    ffmpeg.once('error', () => resolve());
  });
  return { transport, consumer, ffmpeg, rtpPort, exited };
}

/** The SDP FFmpeg reads the consumer's RTP by (its codec, payload type, ports). */
export function sdpOf(consumer: types.Consumer, rtpPort: number, rtcpPort: number): string {
  const codec = consumer.rtpParameters.codecs[0]!;
  const [, name] = codec.mimeType.split('/');
  const channels = codec.channels ? `/${codec.channels}` : '';
  const fmtp = Object.entries(codec.parameters ?? {})
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(';');
  return [
    'v=0',
    'o=- 0 0 IN IP4 127.0.0.1',
    's=recording',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=${consumer.kind} ${rtpPort} RTP/AVP ${codec.payloadType}`,
    `a=rtcp:${rtcpPort}`,
    `a=rtpmap:${codec.payloadType} ${name}/${codec.clockRate}${channels}`,
    ...(fmtp ? [`a=fmtp:${codec.payloadType} ${fmtp}`] : []),
    'a=recvonly',
    '',
  ].join('\n');
}

/** Two free consecutive UDP ports on loopback, the first even (RTP, then RTCP). */
export async function freeUdpPair(): Promise<[number, number]> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = await bound(0);
    const port = first.address().port;
    if (port % 2 === 0 && port < 65535) {
      const second = await bound(port + 1).catch(() => null);
      first.close();
      if (second) {
        second.close();
        return [port, port + 1];
      }
    } else first.close();
  }
  throw errors.MEDIA_SERVER_ERROR.withCause(new Error('no free UDP port pair for a recording'));
}

interface UdpSocketRow {
  readonly port: number;
  /** Bytes waiting unread on it. */
  readonly unread: number;
  readonly inode: string;
}

/**
 * The kernel's UDP sockets (/proc/net/udp and udp6), or undefined where they cannot be read
 * (not Linux).
 */
async function udpSockets(): Promise<UdpSocketRow[] | undefined> {
  const tables = await Promise.all(
    ['/proc/net/udp', '/proc/net/udp6'].map((file) => readFile(file, 'utf8').catch(() => null)),
  );
  if (tables[0] === null) return undefined;
  const rows: UdpSocketRow[] = [];
  for (const line of tables.flatMap((t) => (t ?? '').split('\n').slice(1))) {
    // "sl local rem st tx_queue:rx_queue tr:tm retrnsmt uid timeout inode …", in hexadecimal.
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const port = parseInt(fields[1]!.split(':').pop()!, 16);
    const unread = parseInt(fields[4]!.split(':')[1]!, 16);
    rows.push({ port, unread, inode: fields[9]! });
  }
  return rows;
}

/** The inodes of the sockets `pid` holds open (from /proc/<pid>/fd). */
async function socketsOf(pid: number): Promise<Set<string>> {
  const dir = `/proc/${pid}/fd`;
  const links = await readdir(dir).catch(() => [] as string[]);
  const targets = await Promise.all(
    links.map((fd) => readlink(path.join(dir, fd)).catch(() => '')),
  );
  return new Set(
    targets.flatMap((t) => {
      const match = /^socket:\[(\d+)\]$/.exec(t);
      return match ? [match[1]!] : [];
    }),
  );
}

/**
 * Until FFmpeg listens on all of `ports`, its own sockets, as the kernel lists them
 * (`listening`; without /proc, after a fixed pause), or exited (`gone`: it could not bind
 * one), or is still starting after FFMPEG_LISTEN_MS (`late`).
 */
async function untilListening(
  ffmpeg: ChildProcess,
  ports: readonly number[],
): Promise<'listening' | 'gone' | 'late'> {
  const gone = () => ffmpeg.pid === undefined || ffmpeg.exitCode !== null || !!ffmpeg.signalCode;
  const until = Date.now() + FFMPEG_LISTEN_MS;
  for (let n = 0; Date.now() < until; await sleep(pollDelay(n++))) {
    if (gone()) return 'gone';
    const rows = await udpSockets();
    if (rows === undefined) {
      await sleep(600);
      return gone() ? 'gone' : 'listening';
    }
    const own = await socketsOf(ffmpeg.pid!);
    const listens = (port: number) => rows.some((r) => r.port === port && own.has(r.inode));
    if (ports.every(listens)) return 'listening';
  }
  return gone() ? 'gone' : 'late';
}

/** Until FFmpeg has read everything queued on its socket (or it is gone, or `withinMs`). */
async function untilRead(port: number, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  for (let n = 0; Date.now() < until; await sleep(pollDelay(n++))) {
    const rows = await udpSockets();
    if (!rows?.some((r) => r.port === port && r.unread > 0)) return;
  }
}

/**
 * The pause before the `n`th look at the kernel's tables: 20 ms at first (FFmpeg is usually
 * ready within a few), doubling up to 250 ms, so that a slow FFmpeg is not watched with
 * fifty reads of every UDP socket of the host a second.
 */
const pollDelay = (n: number): number => Math.min(250, 20 * 2 ** n);

function bound(port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });
}
