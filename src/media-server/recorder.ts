/**
 * Recordings of a room, on the media server that holds its router: every live producer of
 * the room, and every one made while it records, is consumed on a plain RTP transport into
 * its own FFmpeg process (a tap: src/media-server/recording-tap.ts), which writes the track
 * unchanged (Opus into Ogg, VP8 into WebM) under `<dir>/<recording_id>/`. A manifest beside
 * the files lists each track (its file, codec, user, source, and its start after the
 * recording's), written again on every change (to a temporary file, then renamed: never
 * half written).
 *
 * FFmpeg flushes every packet to its file in a form readable without an ending (Ogg pages,
 * a live WebM), so `stop` just ends it, and a server that died while recording leaves files
 * as readable as a stopped one's, with a manifest that still says `recording`: the next
 * start of the server, and a `stop` it does not know, mark it `interrupted`.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { types } from 'mediasoup';
import { errors } from '../shared/error-codes.js';
import type { MediaEventBus } from './events.js';
import type { ProducerEntry } from './media-entries.js';
import { appDataOf } from './producer-data.js';
import type { MediaRegistry } from './media-registry.js';
import { closeTap, openTap, type Tap } from './recording-tap.js';

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
/**
 * When a new video track asks its sender for a key frame (ms after it is resumed): soon and
 * often while a simulcast consumer settles on its layer (a request before that reaches no
 * sender), then every second until the first one came (a sender short of bandwidth or CPU
 * may hold the layer back for seconds, and FFmpeg writes nothing before a key frame).
 */
const KEY_FRAME_REQUESTS_MS = [0, 150, 400, 800, 1_500];
const KEY_FRAME_RETRY_MS = 1_000;

interface Track {
  readonly manifest: RecordingTrack;
  readonly tap: Tap;
}

interface Active {
  manifest: RecordingManifest;
  readonly tracks: Map<string, Track>;
  readonly unsubscribe: () => void;
  /** Tracks being started: awaited by `stop`. */
  readonly starting: Set<Promise<void>>;
  /** The manifest's last write asked for: the next one waits for it (see `#save`). */
  saved: Promise<void>;
}

export class Recorder {
  readonly #active = new Map<string, Active>();
  /** Manifest writes so far: each names its temporary file. */
  #writes = 0;
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
      saved: Promise.resolve(),
      unsubscribe: this.bus.subscribe((event) => {
        if (event.type !== 'producer_created' || event.room_code !== roomCode) return;
        this.#follow(active, event.producer_id);
      }),
    };
    this.#active.set(recordingId, active);
    await this.#save(active);
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
    // When the tracks stop taking RTP, not when FFmpeg is done writing (seconds later on a
    // busy machine): the recording's duration is what its files hold.
    const stoppedAtMs = Date.now();
    await Promise.all([...active.tracks.values()].map((t) => closeTap(t.tap)));
    active.manifest = {
      ...(await this.#withFilesOnly(active.manifest)),
      stopped_at_ms: stoppedAtMs,
      status: 'complete',
    };
    await this.#save(active);
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
    const marked: RecordingManifest = {
      ...(await this.#withFilesOnly(manifest)),
      status: 'interrupted',
    };
    await this.#write(marked);
    return marked;
  }

  /**
   * The manifest without the tracks that recorded nothing: FFmpeg makes a track's file only
   * once it read its first packet (a video track's first key frame), so a microphone muted
   * throughout, or a camera whose sender never sent a key frame, has no file to list.
   */
  async #withFilesOnly(manifest: RecordingManifest): Promise<RecordingManifest> {
    const dir = this.#dirOf(manifest.recording_id);
    const written = await Promise.all(
      manifest.tracks.map(async (track) => {
        const size = await stat(path.join(dir, track.file)).then(
          (s) => s.size,
          () => 0,
        );
        if (size > 0) return true;
        this.logger.warn(
          { recording: manifest.recording_id, producerId: track.producer_id, kind: track.kind },
          'a track recorded nothing (no media, or no key frame, came while recording)',
        );
        return false;
      }),
    );
    return { ...manifest, tracks: manifest.tracks.filter((_, i) => written[i]) };
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
    const file = `${producer.kind}-${producerId}.${producer.kind === 'audio' ? 'ogg' : 'webm'}`;
    const dir = this.#dirOf(active.manifest.recording_id);
    const tap = await openTap({
      router,
      producer,
      sdpFile: path.join(dir, `${producerId}.sdp`),
      outFile: path.join(dir, file),
      ffmpeg: this.options.ffmpeg,
      logger: this.logger,
    });
    const { consumer } = tap;
    const codec = consumer.rtpParameters.codecs[0]!;
    const name = codec.mimeType.split('/')[1]!.toLowerCase();
    // A video file begins with its first key frame: the track's start offset is when that
    // left for FFmpeg (what lines the tracks up when they are mixed).
    const keyFrame = { atMs: null as number | null };
    if (producer.kind === 'video') {
      await this.#startAtFirstKeyFrame(active, consumer, producerId, keyFrame);
    }
    await consumer.resume();
    const resumedAtMs = Date.now() - active.manifest.started_at_ms;
    if (producer.kind === 'video') void askForKeyFrame(consumer, keyFrame);
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
      tap,
    };
    if (this.#active.get(active.manifest.recording_id) !== active) {
      await closeTap(track.tap); // stopped meanwhile
      return;
    }
    active.tracks.set(producerId, track);
    active.manifest = { ...active.manifest, tracks: [...active.manifest.tracks, track.manifest] };
    await this.#save(active);
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
      void this.#save(active).catch(() => undefined);
    });
  }

  /**
   * Writes the recording's manifest as it is now, after the writes asked before: tracks that
   * start together each save it, and two writes of one temporary file at once made one
   * rename fail, or left an older manifest last.
   */
  #save(active: Active): Promise<void> {
    const { manifest } = active;
    const saved = active.saved.then(() => this.#write(manifest));
    active.saved = saved.catch(() => undefined);
    return saved;
  }

  /**
   * Writes a manifest to a temporary file of its own, then renames it: never half written,
   * and writes that meet (a start's sweep and a stop marking one recording interrupted) each
   * rename their own file.
   */
  async #write(manifest: RecordingManifest): Promise<void> {
    const dir = this.#dirOf(manifest.recording_id);
    const temporary = path.join(dir, `manifest.${process.pid}.${++this.#writes}.tmp`);
    await writeFile(temporary, JSON.stringify(manifest, null, 2));
    await rename(temporary, path.join(dir, 'manifest.json'));
  }
}

function checkName(recordingId: string): void {
  if (!NAME.test(recordingId))
    throw errors.MEDIA_RESOURCE_NOT_FOUND.withCause(new Error(`recording ${recordingId}`));
}

/** Asks for a key frame on KEY_FRAME_REQUESTS_MS, then each second until one came. */
async function askForKeyFrame(
  consumer: types.Consumer,
  keyFrame: { atMs: number | null },
): Promise<void> {
  const ask = () => consumer.requestKeyFrame().catch(() => undefined);
  let previousMs = 0;
  for (const ms of KEY_FRAME_REQUESTS_MS) {
    await sleep(ms - previousMs);
    previousMs = ms;
    if (consumer.closed) return;
    void ask();
  }
  while (keyFrame.atMs === null) {
    await sleep(KEY_FRAME_RETRY_MS);
    if (consumer.closed) return;
    if (keyFrame.atMs === null) void ask();
  }
}
