/**
 * Recordings on a real media server, fed real RTP by FFmpeg (an Opus tone and a VP8 test
 * pattern through plain transports, as a browser's tracks would arrive): each track is
 * written to its own file, which ffprobe reads back with the right codec and about the
 * right duration; the manifest lists the tracks with their users; a producer made while
 * recording is recorded too; the internal API serves a listed file (with a range) and no
 * other; a recording left `recording` by a dead server is marked interrupted.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
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

  it('writes each track to its own file, listed in the manifest, readable by ffprobe', async () => {
    const room = 'rec-room-1';
    await server.registry.ensureRouter(room);
    const produce = async (kind: 'audio' | 'video', peer: string, ssrc: number) => {
      const { id, port } = await plainSendTransport(server, room, peer);
      const { producer } = await server.registry.createProducer(
        id,
        kind,
        feedRtpParameters(kind, ssrc),
        false,
        {
          source: kind === 'audio' ? 'microphone' : 'camera',
        },
      );
      return { producerId: producer.id, port };
    };
    const audio = await produce('audio', '17', 1111);
    const started = await server.recorder.start(room, 'rec-1');
    assert.equal(started.status, 'recording');
    assert.equal(started.tracks.length, 1, 'the live producer is recorded at once');
    // A producer made while recording is recorded too.
    const video = await produce('video', '18', 2222);
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

  it('marks a recording a dead server left running as interrupted', async () => {
    await writeFile(path.join(dir, 'manifest-probe'), '');
    const left = path.join(dir, 'rec-dead');
    await rm(left, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(left));
    const manifest = {
      recording_id: 'rec-dead',
      room_code: 'gone',
      started_at_ms: Date.now() - 1_000,
      stopped_at_ms: null,
      status: 'recording',
      tracks: [],
    };
    await writeFile(path.join(left, 'manifest.json'), JSON.stringify(manifest));
    await server.recorder.sweep();
    assert.equal((await server.recorder.manifest('rec-dead')).status, 'interrupted');
    // A stop it never knew says the same.
    assert.equal((await server.recorder.stop('rec-dead')).status, 'interrupted');
  });
});
