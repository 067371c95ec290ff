/**
 * Recordings of a room, on the media server that holds its router: every live producer of
 * the room, and every one made while it records, is consumed on a plain RTP transport into
 * its own FFmpeg process, which writes the track unchanged (Opus into Ogg, VP8 into WebM)
 * under `<dir>/<recording_id>/`. A manifest beside the files lists each track (its file,
 * codec, user, source, and its start after the recording's), written again on every change
 * (to a temporary file, then renamed: never half written).
 *
 * FFmpeg flushes every packet to its file in a form readable without an ending (Ogg pages,
 * a live WebM), so `stop` just ends it, and a server that died while recording leaves files
 * as readable as a stopped one's, with a manifest that still says `recording`: the next
 * start of the server, and a `stop` it does not know, mark it `interrupted`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { types } from 'mediasoup';
import { errors } from '../shared/error-codes.js';
import type { MediaEventBus } from './events.js';
import type { ProducerEntry } from './media-entries.js';
import { appDataOf } from './producer-data.js';
import type { MediaRegistry } from './media-registry.js';

export type RecordingStatus = 'recording' | 'complete' | 'interrupted';

export interface RecordingTrack {
  /** The file's name in the recording's directory. */
  readonly file: string;
  readonly kind: 'audio' | 'video';
  /** `opus` or `vp8`. */
  readonly codec: string;
  readonly producer_id: string;
  /** Whose track (the producer's transport peer), or null. */
  readonly user_id: string | null;
  /** What it carries (the producer's `source`), or null when it named none. */
  readonly source: string | null;
  /** When the track starts, after the recording's start (ms). */
  readonly start_offset_ms: number;
}

export interface RecordingManifest {
  readonly recording_id: string;
  readonly room_code: string;
  readonly started_at_ms: number;
  readonly stopped_at_ms: number | null;
  readonly status: RecordingStatus;
  readonly tracks: readonly RecordingTrack[];
}

export interface RecorderOptions {
  /** Where recordings are written (one directory each). */
  readonly dir: string;
  /** The FFmpeg binary (Debian's `ffmpeg`). */
  readonly ffmpeg: string;
  /** Recordings stopped (or started, if never stopped) this long ago are deleted; 0 keeps them. */
  readonly retentionMs: number;
}

/** Recording and file names: what the server made, nothing a caller could walk out of. */
const NAME = /^[A-Za-z0-9_-]{1,100}$/;
const FILE = /^[A-Za-z0-9_-]{1,100}\.(ogg|webm)$/;
/** How long FFmpeg may take to listen for RTP after its start (a busy machine's). */
const FFMPEG_READY_MS = 5_000;
/** When a new video track asks its sender for key frames (ms after it is resumed). */
const KEY_FRAME_REQUESTS_MS = [0, 150, 400, 800, 1_500];
/** How long FFmpeg gets to read what is still on its way once its consumer closed. */
const FFMPEG_DRAIN_MS = 200;

interface Track {
  readonly manifest: RecordingTrack;
  readonly transport: types.PlainTransport;
  readonly consumer: types.Consumer;
  readonly ffmpeg: ChildProcess;
  readonly exited: Promise<void>;
}

interface Active {
  manifest: RecordingManifest;
  readonly tracks: Map<string, Track>;
  readonly unsubscribe: () => void;
  /** Tracks being started: awaited by `stop`. */
  readonly starting: Set<Promise<void>>;
}

export class Recorder {
  readonly #active = new Map<string, Active>();
  /** Starts in progress, by recording id: a second start of one waits for the first. */
  readonly #starts = new Map<string, Promise<RecordingManifest>>();
  #ffmpegFound: Promise<boolean> | null = null;

  constructor(
    private readonly registry: MediaRegistry,
    private readonly bus: MediaEventBus,
    private readonly options: RecorderOptions,
    private readonly logger: Logger,
  ) {}

  /** Whether FFmpeg runs here (looked up once). */
  available(): Promise<boolean> {
    this.#ffmpegFound ??= new Promise((resolve) => {
      const probe = spawn(this.options.ffmpeg, ['-version'], { stdio: 'ignore' });
      probe.once('error', () => resolve(false));
      probe.once('exit', (code) => resolve(code === 0));
    });
    return this.#ffmpegFound;
  }

  /**
   * Starts recording the room (idempotent for the same id): its live producers now, and
   * every producer made in it until `stop`. RECORDING_UNAVAILABLE without FFmpeg; the
   * room must have its router here.
   */
  start(roomCode: string, recordingId: string): Promise<RecordingManifest> {
    checkName(recordingId);
    let started = this.#starts.get(recordingId);
    if (!started) {
      started = this.#start(roomCode, recordingId).finally(() => this.#starts.delete(recordingId));
      this.#starts.set(recordingId, started);
    }
    return started;
  }

  async #start(roomCode: string, recordingId: string): Promise<RecordingManifest> {
    const known = this.#active.get(recordingId);
    if (known) return known.manifest;
    if (!(await this.available())) throw errors.RECORDING_UNAVAILABLE();
    this.registry.routerOfRoom(roomCode); // the room's router is here, or this throws
    const previous = await this.manifest(recordingId).catch(() => null);
    if (previous) return previous; // done before (a retried start after its stop)
    await mkdir(this.#dirOf(recordingId), { recursive: true });
    const active: Active = {
      manifest: {
        recording_id: recordingId,
        room_code: roomCode,
        started_at_ms: Date.now(),
        stopped_at_ms: null,
        status: 'recording',
        tracks: [],
      },
      tracks: new Map(),
      starting: new Set(),
      unsubscribe: this.bus.subscribe((event) => {
        if (event.type !== 'producer_created' || event.room_code !== roomCode) return;
        this.#follow(active, event.producer_id);
      }),
    };
    this.#active.set(recordingId, active);
    await this.#save(active.manifest);
    for (const entry of this.registry.producersOfRoom(roomCode)) {
      this.#follow(active, entry.producer.id);
    }
    await Promise.allSettled([...active.starting]);
    return active.manifest;
  }

  /**
   * Stops the recording: each FFmpeg finishes its file, the consumers close. A recording
   * this server does not hold (it restarted meanwhile) is marked interrupted.
   */
  async stop(recordingId: string): Promise<RecordingManifest> {
    checkName(recordingId);
    const active = this.#active.get(recordingId);
    if (!active) return this.#interrupted(recordingId);
    active.unsubscribe();
    await Promise.allSettled([...active.starting]);
    this.#active.delete(recordingId);
    await Promise.all([...active.tracks.values()].map((t) => this.#finish(t)));
    active.manifest = { ...active.manifest, stopped_at_ms: Date.now(), status: 'complete' };
    await this.#save(active.manifest);
    return active.manifest;
  }

  /** Stops every recording (the server is closing): their files are finished. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#active.keys()].map((id) => this.stop(id)));
  }

  /** The recording's manifest; MEDIA_RESOURCE_NOT_FOUND when there is none. */
  async manifest(recordingId: string): Promise<RecordingManifest> {
    checkName(recordingId);
    const active = this.#active.get(recordingId);
    if (active) return active.manifest;
    try {
      const text = await readFile(path.join(this.#dirOf(recordingId), 'manifest.json'), 'utf8');
      return JSON.parse(text) as RecordingManifest;
    } catch {
      throw errors.MEDIA_RESOURCE_NOT_FOUND.withCause(new Error(`recording ${recordingId}`));
    }
  }

  /** The path of one of the recording's files (a name its manifest lists). */
  async file(recordingId: string, file: string): Promise<string> {
    const manifest = await this.manifest(recordingId);
    if (!FILE.test(file) || !manifest.tracks.some((t) => t.file === file)) {
      throw errors.MEDIA_RESOURCE_NOT_FOUND.withCause(new Error(`file ${file}`));
    }
    return path.join(this.#dirOf(recordingId), file);
  }

  /**
   * At the server's start: recordings a dead predecessor left `recording` are marked
   * interrupted; recordings past the retention are deleted.
   */
  async sweep(nowMs = Date.now()): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.options.dir);
    } catch {
      return; // nothing recorded yet
    }
    for (const name of names) {
      if (!NAME.test(name) || this.#active.has(name)) continue;
      const manifest = await this.manifest(name).catch(() => null);
      if (!manifest) continue;
      if (manifest.status === 'recording') await this.#interrupted(name);
      const ended = manifest.stopped_at_ms ?? manifest.started_at_ms;
      const { retentionMs } = this.options;
      if (retentionMs > 0 && nowMs - ended > retentionMs) {
        await rm(this.#dirOf(name), { recursive: true, force: true });
      }
    }
  }

  #dirOf(recordingId: string): string {
    return path.join(this.options.dir, recordingId);
  }

  async #interrupted(recordingId: string): Promise<RecordingManifest> {
    const manifest = await this.manifest(recordingId);
    if (manifest.status !== 'recording') return manifest;
    const marked: RecordingManifest = { ...manifest, status: 'interrupted' };
    await this.#save(marked);
    return marked;
  }

  /** Starts recording one producer (once), tracked until it is running. */
  #follow(active: Active, producerId: string): void {
    if (active.tracks.has(producerId)) return;
    const started = this.#record(active, producerId)
      .catch((err: unknown) =>
        this.logger.warn(
          { err, producerId, recording: active.manifest.recording_id },
          'a track could not be recorded',
        ),
      )
      .finally(() => active.starting.delete(started));
    active.starting.add(started);
  }

  async #record(active: Active, producerId: string): Promise<void> {
    let entry: ProducerEntry;
    try {
      entry = this.registry.producer(producerId);
    } catch {
      return; // closed meanwhile
    }
    const { producer, transportEntry } = entry;
    const { router } = transportEntry.routerEntry;
    const [rtpPort, rtcpPort] = await freeUdpPair();
    const transport = await router.createPlainTransport({
      listenInfo: { protocol: 'udp', ip: '127.0.0.1' },
      rtcpMux: false,
      comedia: false,
    });
    await transport.connect({ ip: '127.0.0.1', port: rtpPort, rtcpPort });
    const consumer = await transport.consume({
      producerId,
      rtpCapabilities: router.rtpCapabilities,
      paused: true,
    });
    const codec = consumer.rtpParameters.codecs[0]!;
    const name = codec.mimeType.split('/')[1]!.toLowerCase();
    const file = `${producer.kind}-${producerId}.${producer.kind === 'audio' ? 'ogg' : 'webm'}`;
    const dir = this.#dirOf(active.manifest.recording_id);
    const sdpFile = path.join(dir, `${producerId}.sdp`);
    await writeFile(sdpFile, sdpOf(consumer, rtpPort, rtcpPort));
    const ffmpeg = spawn(
      this.options.ffmpeg,
      [
        ...['-nostdin', '-loglevel', 'error'],
        ...['-protocol_whitelist', 'file,udp,rtp', '-fflags', '+genpts'],
        ...['-i', sdpFile, '-map', '0', '-c', 'copy', '-flush_packets', '1'],
        // Every packet reaches the file at once, in a form readable without an ending:
        // Ogg pages of 200 ms; a live WebM (clusters of 100 ms, no cues, as a browser's
        // MediaRecorder writes; a muxer holds a page or a cluster until it is complete).
        // So a stop is a kill, and a server's death loses at most that last page.
        ...(producer.kind === 'audio'
          ? ['-page_duration', '200000', '-f', 'ogg']
          : ['-live', '1', '-cluster_time_limit', '100', '-f', 'webm']),
        ...['-y', path.join(dir, file)],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    ffmpeg.stderr?.on('data', (chunk: Buffer) =>
      this.logger.warn({ producerId, ffmpeg: chunk.toString('utf8').trim() }, 'ffmpeg'),
    );
    const exited = new Promise<void>((resolve) => {
      ffmpeg.once('exit', () => resolve());
      ffmpeg.once('error', () => resolve());
    });
    // RTP sent before FFmpeg listens is lost (a key frame with it): wait until it does.
    await untilBound(rtpPort, FFMPEG_READY_MS);
    // A video file begins with its first key frame: the track's start offset is when that
    // left for FFmpeg (what lines the tracks up when they are mixed).
    const keyFrame = { atMs: null as number | null };
    if (producer.kind === 'video') {
      await this.#startAtFirstKeyFrame(active, consumer, producerId, keyFrame);
    }
    await consumer.resume();
    const resumedAtMs = Date.now() - active.manifest.started_at_ms;
    if (producer.kind === 'video') {
      // FFmpeg writes from a key frame on: asked for at once, and again while a simulcast
      // consumer settles on its layer (a request before that reaches no sender).
      for (const ms of KEY_FRAME_REQUESTS_MS) {
        setTimeout(() => {
          if (!consumer.closed) void consumer.requestKeyFrame().catch(() => undefined);
        }, ms);
      }
    }
    const { source } = appDataOf(producer);
    const track: Track = {
      manifest: {
        file,
        kind: producer.kind,
        codec: name,
        producer_id: producerId,
        user_id: transportEntry.peerId,
        source: source ?? null,
        // Audio flows at once; video from its first key frame (set when it comes).
        start_offset_ms: keyFrame.atMs ?? resumedAtMs,
      },
      transport,
      consumer,
      ffmpeg,
      exited,
    };
    if (this.#active.get(active.manifest.recording_id) !== active) {
      await this.#finish(track); // stopped meanwhile
      return;
    }
    active.tracks.set(producerId, track);
    active.manifest = { ...active.manifest, tracks: [...active.manifest.tracks, track.manifest] };
    await this.#save(active.manifest);
  }

  /**
   * Sets the track's start offset to when its consumer sent its first key frame (a video
   * file begins there), once: in the manifest when the track is listed already, else in
   * `started` for the listing to use.
   */
  async #startAtFirstKeyFrame(
    active: Active,
    consumer: types.Consumer,
    producerId: string,
    started: { atMs: number | null },
  ): Promise<void> {
    await consumer.enableTraceEvent(['keyframe']);
    consumer.on('trace', (trace) => {
      if (trace.type !== 'keyframe' || trace.direction !== 'out' || started.atMs !== null) return;
      started.atMs = Date.now() - active.manifest.started_at_ms;
      void consumer.enableTraceEvent([]).catch(() => undefined);
      if (!active.manifest.tracks.some((t) => t.producer_id === producerId)) return;
      const tracks = active.manifest.tracks.map((t) =>
        t.producer_id === producerId ? { ...t, start_offset_ms: started.atMs! } : t,
      );
      active.manifest = { ...active.manifest, tracks };
      void this.#save(active.manifest).catch(() => undefined);
    });
  }

  /**
   * Ends a track: no more RTP, then FFmpeg goes. Its file is whole already (every packet
   * was flushed); a signal asking it to finish would wait for a packet that a paused track
   * never sends (FFmpeg only hears one between packets).
   */
  async #finish(track: Track): Promise<void> {
    track.consumer.close();
    track.transport.close();
    // The packets in flight on loopback are read within this.
    await new Promise((resolve) => setTimeout(resolve, FFMPEG_DRAIN_MS));
    track.ffmpeg.kill('SIGKILL');
    await track.exited;
  }

  async #save(manifest: RecordingManifest): Promise<void> {
    const dir = this.#dirOf(manifest.recording_id);
    const temporary = path.join(dir, `manifest.${process.pid}.tmp`);
    await writeFile(temporary, JSON.stringify(manifest, null, 2));
    await rename(temporary, path.join(dir, 'manifest.json'));
  }
}

function checkName(recordingId: string): void {
  if (!NAME.test(recordingId))
    throw errors.MEDIA_RESOURCE_NOT_FOUND.withCause(new Error(`recording ${recordingId}`));
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
async function freeUdpPair(): Promise<[number, number]> {
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

/**
 * Resolves once a socket is bound to the UDP `port` (FFmpeg listens), as the
 * kernel lists it (/proc/net/udp: looked at, never bound, so FFmpeg's bind cannot fail for
 * it), or after `withinMs`. Without /proc, after a fixed pause.
 */
async function untilBound(port: number, withinMs: number): Promise<void> {
  // Its local address column, whatever address FFmpeg bound (it binds them all).
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const local = new RegExp(`^\\s*\\d+: [0-9A-F]{8}:${hex} `, 'm');
  for (const until = Date.now() + withinMs; Date.now() < until;) {
    const table = await readFile('/proc/net/udp', 'utf8').catch(() => null);
    if (table === null) return new Promise((resolve) => setTimeout(resolve, 600));
    if (local.test(table)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function bound(port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });
}
