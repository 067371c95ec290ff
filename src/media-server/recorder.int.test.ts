/**
 * Recordings on a real media server, fed real RTP by FFmpeg (an Opus tone and a VP8 test
 * pattern through plain transports, as a browser's tracks would arrive): each track is
 * written to its own file, which ffprobe reads back with the right codec and about the
 * right duration; the manifest lists the tracks with their users; a producer made while
 * recording is recorded too; the internal API serves a listed file (with a range) and no
 * other; an FFmpeg behind at the stop reads what waits for it before it goes, and the
 * recording lasts what its file holds; a track whose port was taken before FFmpeg bound it
 * is opened on others, and only once FFmpeg listens, however slow it is to start; a camera
 * is asked for a key frame until one comes, and a track that recorded nothing (muted
 * throughout, no key frame) is not listed; a
 * recording left `recording` by a dead server is marked interrupted, also by a sweep and
 * stops at once.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { silentLogger } from '../cell/testing/harness.js';
import { closeTap, freeUdpPair, openTap } from './recording-tap.js';
import type { MediaServer } from './server.js';
import { TEST_TOKEN, mediaSkipReason, startTestMediaServer } from './testing/harness.js';
import { ffmpegFeed, feedRtpParameters } from './testing/ffmpeg-feed.js';
import { plainSendTransport } from './testing/plain-rtp.js';
import { probeRecording } from './testing/probe.js';

const run = promisify(execFile);

/** Why these tests cannot run here (no FFmpeg), or false. */
async function ffmpegSkip(): Promise<string | false> {
  try {
    await run('ffmpeg', ['-version']);
    await run('ffprobe', ['-version']);
    return false;
  } catch {
    const hint = 'no ffmpeg/ffprobe (apt-get install ffmpeg)';
    if (process.env.CI === 'true') throw new Error(`recording test must not skip in CI: ${hint}`);
    return hint;
  }
}

const skip = mediaSkipReason() || (await ffmpegSkip());

describe('recordings on the media server', { skip }, () => {
  let server: MediaServer;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-recordings-'));
    server = await startTestMediaServer({
      workers: 1,
      recordings: { dir, ffmpeg: 'ffmpeg', retentionMs: 0 },
    });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A producer of `peer` in the room, fed by {@link ffmpegFeed} on its `port`. */
  async function producerIn(room: string, kind: 'audio' | 'video', peer: string, ssrc: number) {
    const { id, port } = await plainSendTransport(server, room, peer);
    const { producer } = await server.registry.createProducer(
      id,
      kind,
      feedRtpParameters(kind, ssrc),
      false,
      { source: kind === 'audio' ? 'microphone' : 'camera' },
    );
    return { producer, port };
  }

  it('writes each track to its own file, listed in the manifest, readable by ffprobe', async () => {
    const room = 'rec-room-1';
    await server.registry.ensureRouter(room);
    const audio = await producerIn(room, 'audio', '17', 1111);
    const started = await server.recorder.start(room, 'rec-1');
    assert.equal(started.status, 'recording');
    assert.equal(started.tracks.length, 1, 'the live producer is recorded at once');
    // A producer made while recording is recorded too.
    const video = await producerIn(room, 'video', '18', 2222);
    const feeds = [
      ffmpegFeed('audio', audio.port, 1111, { seconds: 5 }),
      ffmpegFeed('video', video.port, 2222, { seconds: 5 }),
    ];
    await Promise.all(feeds.map((f) => new Promise((resolve) => f.once('exit', resolve))));
    await sleep(300);
    const stopped = await server.recorder.stop('rec-1');
    assert.equal(stopped.status, 'complete');
    assert.deepEqual(stopped.tracks.map((t) => [t.kind, t.codec, t.user_id, t.source]).sort(), [
      ['audio', 'opus', '17', 'microphone'],
      ['video', 'vp8', '18', 'camera'],
    ]);
    const onDisk = JSON.parse(await readFile(path.join(dir, 'rec-1', 'manifest.json'), 'utf8'));
    assert.deepEqual(onDisk, stopped);
    for (const track of stopped.tracks) {
      const { codec, duration } = await probeRecording(path.join(dir, 'rec-1', track.file));
      assert.equal(codec, track.codec);
      // About the 5 s fed, less what came before the track's recording began (FFmpeg's
      // start, and for video its first key frame: this feeder sends one every third of a
      // second, as it ignores the key frame requests a browser answers at once).
      assert.ok(duration > 3.2 && duration < 5.5, `${track.file}: ${duration} s`);
    }

    // The internal API serves a listed file, a range of it, and nothing else.
    const file = stopped.tracks[0]!.file;
    const get = (url: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${url}`, { headers: { 'x-internal-token': TEST_TOKEN, ...headers } });
    const whole = await get(`/internal/v1/recordings/rec-1/files/${file}`);
    assert.equal(whole.status, 200);
    const size = (await whole.arrayBuffer()).byteLength;
    const part = await get(`/internal/v1/recordings/rec-1/files/${file}`, { range: 'bytes=0-99' });
    assert.equal(part.status, 206);
    assert.equal((await part.arrayBuffer()).byteLength, 100);
    assert.ok(size > 100);
    for (const other of ['manifest.json', `${stopped.tracks[0]!.producer_id}.sdp`, '..%2Fx.ogg']) {
      const refused = await get(`/internal/v1/recordings/rec-1/files/${other}`);
      assert.equal(refused.status, 404, other);
    }
    const noToken = await fetch(`${server.url}/internal/v1/recordings/rec-1`);
    assert.equal(noToken.status, 401);
  });

  it('lets an FFmpeg that fell behind read what waits for it before a stop ends it', async () => {
    const room = 'rec-room-behind';
    await server.registry.ensureRouter(room);
    const { producer, port } = await producerIn(room, 'audio', '19', 3333);
    await server.recorder.start(room, 'rec-behind');
    const sdp = path.join(dir, 'rec-behind', `${producer.id}.sdp`);
    const feed = ffmpegFeed('audio', port, 3333, { seconds: 4 });
    const fed = new Promise((resolve) => feed.once('exit', resolve));
    // The recorder's FFmpeg stops reading after a second, as on a machine too busy to run
    // it, and is still stopped when the recording is: 3 s of audio wait on its socket.
    await sleep(1_000);
    const { stdout } = await run('pgrep', ['-f', sdp]);
    const pid = Number(stdout.trim().split('\n')[0]);
    assert.ok(pid > 0, `the recorder's FFmpeg for ${sdp}`);
    process.kill(pid, 'SIGSTOP');
    await fed;
    const stopping = server.recorder.stop('rec-behind');
    await sleep(1_500);
    process.kill(pid, 'SIGCONT');
    const stopped = await stopping;
    const [track] = stopped.tracks;
    const { duration } = await probeRecording(path.join(dir, 'rec-behind', track!.file));
    // Killed 200 ms after the stop, it had written only the first second.
    assert.ok(duration > 3.2, `${duration} s of the 4 s fed`);
    // The recording lasts until its tracks stopped taking RTP, not until FFmpeg was done.
    const recorded =
      (stopped.stopped_at_ms! - stopped.started_at_ms - track!.start_offset_ms) / 1e3;
    assert.ok(Math.abs(duration - recorded) < 1, `${duration} s in a recording of ${recorded} s`);
  });

  it('keeps asking a camera for a key frame, and lists only the tracks that recorded something', async () => {
    const room = 'rec-room-empty';
    await server.registry.ensureRouter(room);
    // A microphone muted throughout (no RTP), a camera whose only key frame came before the
    // recording (it ignores the requests), and a microphone that talks.
    await producerIn(room, 'audio', '21', 4441);
    const camera = await producerIn(room, 'video', '22', 4442);
    const talking = await producerIn(room, 'audio', '23', 4443);
    const pictures = ffmpegFeed('video', camera.port, 4442, { keyFrameEvery: 100_000 });
    const asked: number[] = [];
    await camera.producer.enableTraceEvent(['pli']);
    camera.producer.on('trace', (t) => {
      if (t.type === 'pli' && t.direction === 'out') asked.push(Date.now());
    });
    try {
      await sleep(1_000);
      const started = await server.recorder.start(room, 'rec-empty');
      const startedAt = Date.now();
      assert.equal(started.tracks.length, 3);
      // The three tracks started together, each saving the manifest: the last one is on disk.
      const saved = await readFile(path.join(dir, 'rec-empty', 'manifest.json'), 'utf8');
      assert.equal(JSON.parse(saved).tracks.length, 3);
      const tone = ffmpegFeed('audio', talking.port, 4443, { seconds: 5 });
      await new Promise((resolve) => tone.once('exit', resolve));
      const stopped = await server.recorder.stop('rec-empty');
      // The sender was asked all along, not only in the first seconds.
      const late = asked.filter((at) => at - startedAt > 3_000);
      assert.ok(
        late.length > 0,
        `key frame requests at ${asked.map((a) => a - startedAt).join(', ')} ms`,
      );
      assert.equal(stopped.status, 'complete');
      // Only the talking microphone made a file: the others are not listed (no URL that 404s).
      assert.deepEqual(
        stopped.tracks.map((t) => [t.user_id, t.kind]),
        [['23', 'audio']],
      );
      const onDisk = JSON.parse(
        await readFile(path.join(dir, 'rec-empty', 'manifest.json'), 'utf8'),
      );
      assert.deepEqual(onDisk, stopped);
    } finally {
      pictures.kill('SIGKILL');
    }
  });

  it('opens a track on other ports when one of its ports was taken before FFmpeg bound it', async () => {
    const room = 'rec-room-taken';
    const { router } = (await server.registry.ensureRouter(room)).entry;
    const { producer, port } = await producerIn(room, 'audio', '24', 5551);
    // Other sockets take the first pair, as a transport may between the recorder finding
    // it free and FFmpeg binding it.
    const [takenPort, takenRtcp] = await freeUdpPair();
    const takers = [takenPort, takenRtcp].map((taken) => {
      const socket = dgram.createSocket('udp4');
      return new Promise<dgram.Socket>((resolve) =>
        socket.bind(taken, '127.0.0.1', () => resolve(socket)),
      );
    });
    const taken = await Promise.all(takers);
    const pairs: number[] = [];
    const out = path.join(dir, 'taken.ogg');
    try {
      const tap = await openTap({
        router,
        producer,
        sdpFile: path.join(dir, 'taken.sdp'),
        outFile: out,
        ffmpeg: 'ffmpeg',
        logger: silentLogger,
        ports: async () => {
          const pair: [number, number] =
            pairs.length === 0 ? [takenPort, takenRtcp] : await freeUdpPair();
          pairs.push(pair[0]);
          return pair;
        },
      });
      assert.equal(pairs.length, 2, 'a second pair after the taken one');
      assert.equal(tap.rtpPort, pairs[1]);
      await tap.consumer.resume();
      const feed = ffmpegFeed('audio', port, 5551, { seconds: 2 });
      await new Promise((resolve) => feed.once('exit', resolve));
      await closeTap(tap);
    } finally {
      for (const socket of taken) socket.close();
    }
    const { duration } = await probeRecording(out);
    assert.ok(duration > 1.2, `${duration} s of the 2 s fed`);
  });

  it('opens a track only once FFmpeg listens, however slow FFmpeg is to start', async () => {
    const room = 'rec-room-slow';
    const { router } = (await server.registry.ensureRouter(room)).entry;
    const { producer, port } = await producerIn(room, 'audio', '26', 6661);
    // An FFmpeg that takes 7 s to start, as one did on a loaded machine: RTP sent before it
    // listens is lost, while the track's start offset would say it was recorded.
    const slow = path.join(dir, 'slow-ffmpeg.sh');
    await writeFile(slow, '#!/bin/sh\nsleep 7\nexec ffmpeg "$@"\n', { mode: 0o755 });
    const out = path.join(dir, 'slow.ogg');
    const tap = await openTap({
      router,
      producer,
      sdpFile: path.join(dir, 'slow.sdp'),
      outFile: out,
      ffmpeg: slow,
      logger: silentLogger,
    });
    try {
      // FFmpeg holds the port now: binding it fails.
      const probe = dgram.createSocket('udp4');
      const bind = await new Promise<string>((resolve) => {
        probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
        probe.bind(tap.rtpPort, '127.0.0.1', () => resolve('bound'));
      });
      probe.close();
      assert.equal(bind, 'EADDRINUSE', 'open before FFmpeg listened');
      await tap.consumer.resume();
      const feed = ffmpegFeed('audio', port, 6661, { seconds: 2 });
      await new Promise((resolve) => feed.once('exit', resolve));
    } finally {
      await closeTap(tap);
    }
    const { duration } = await probeRecording(out);
    assert.ok(duration > 1.2, `${duration} s of the 2 s fed`);
  });

  it('marks a recording a dead server left running as interrupted', async () => {
    await writeFile(path.join(dir, 'manifest-probe'), '');
    const left = path.join(dir, 'rec-dead');
    await rm(left, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(left));
    // It had begun two tracks; only one had written anything when the server died.
    const track = (file: string, kind: 'audio' | 'video') => ({
      file,
      kind,
      codec: kind === 'audio' ? 'opus' : 'vp8',
      producer_id: file,
      user_id: '7',
      source: null,
      start_offset_ms: 0,
    });
    const manifest = {
      recording_id: 'rec-dead',
      room_code: 'gone',
      started_at_ms: Date.now() - 1_000,
      stopped_at_ms: null,
      status: 'recording',
      tracks: [track('audio-a.ogg', 'audio'), track('video-b.webm', 'video')],
    };
    await writeFile(path.join(left, 'manifest.json'), JSON.stringify(manifest));
    await writeFile(path.join(left, 'audio-a.ogg'), 'OggS');
    // The start's sweep and stops of a recording it never knew, all at once: each marks it,
    // and none fails (one temporary file written by both, renamed by one, was gone for the
    // other).
    const marks = await Promise.allSettled([
      server.recorder.sweep(),
      ...[1, 2, 3].map(() => server.recorder.stop('rec-dead')),
    ]);
    assert.deepEqual(
      marks.map((m) => m.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
      JSON.stringify(marks),
    );
    const swept = await server.recorder.manifest('rec-dead');
    assert.equal(swept.status, 'interrupted');
    assert.deepEqual(
      swept.tracks.map((t) => t.file),
      ['audio-a.ogg'],
    );
    // A stop it never knew says the same.
    assert.equal((await server.recorder.stop('rec-dead')).status, 'interrupted');
  });
});
