/**
 * `npm run bench:recording`: what a meeting recording costs the media server, per track.
 * One media server (one worker, in this process) holds a room with BENCH_AUDIO (6) Opus
 * and BENCH_VIDEO (2) VP8 320×240 producers, fed by FFmpeg processes through plain
 * transports for the whole run (their encoding is theirs, not counted). Each of
 * BENCH_ROUNDS (3) rounds measures BENCH_SECONDS (5) without a recording, then the same
 * window while the room is recorded (its FFmpeg processes started and settled first).
 *
 * Counted: the CPU time of the mediasoup worker (it forwards each track once more, to its
 * recorder) and of the recording's FFmpeg processes (they copy RTP into files), from
 * /proc. A track's cost is (recording − not) over the window, in percent of one core,
 * divided by the tracks; medians over the rounds. Loopback, 2-core machine: FFmpeg's share
 * dominates, and it is a per-core cost that does not depend on the room's audience.
 *
 * Last lines machine-readable: `recording_cpu_pct_per_track=`, `recording_ffmpeg_cpu_pct_per_track=`,
 * `recording_worker_cpu_pct_per_track=`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestMediaServer } from '../src/media-server/testing/harness.js';
import { ffmpegFeed, feedRtpParameters } from '../src/media-server/testing/ffmpeg-feed.js';
import { plainSendTransport } from '../src/media-server/testing/plain-rtp.js';
import { median } from './load.js';

const AUDIO = Number(process.env.BENCH_AUDIO ?? 6);
const VIDEO = Number(process.env.BENCH_VIDEO ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Clock ticks per second of /proc's CPU times (Linux's USER_HZ). */
const TICKS = 100;

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; 0 if gone. */
async function cpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** The pids of the processes whose command line names `dir` (the recording's FFmpegs). */
async function recorderPids(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmd = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmd.startsWith('ffmpeg') && cmd.includes(dir)) pids.push(Number(name));
  }
  return pids;
}

const dir = await mkdtemp(path.join(tmpdir(), 'bench-recordings-'));
const server = await startTestMediaServer({
  workers: 1,
  recordings: { dir, ffmpeg: 'ffmpeg', retentionMs: 0 },
});
const feeders: ChildProcess[] = [];
try {
  if (!(await server.recorder.available())) throw new Error('no ffmpeg (apt-get install ffmpeg)');
  const room = 'bench-recording';
  await server.registry.ensureRouter(room);
  const kinds = [
    ...Array.from({ length: AUDIO }, () => 'audio' as const),
    ...Array.from({ length: VIDEO }, () => 'video' as const),
  ];
  for (const [i, kind] of kinds.entries()) {
    const ssrc = 10_000 + i;
    const { id, port } = await plainSendTransport(server, room, String(i + 1));
    await server.registry.createProducer(id, kind, feedRtpParameters(kind, ssrc), false, {});
    feeders.push(ffmpegFeed(kind, port, ssrc, { keyFrameEvery: 30 }));
  }
  const workerPid = server.pool.slots[0]!.worker.pid;
  await sleep(2_000); // the feeds run

  const per = { total: [] as number[], ffmpeg: [] as number[], worker: [] as number[] };
  for (let round = 1; round <= ROUNDS; round++) {
    const w0 = await cpuSeconds(workerPid);
    await sleep(SECONDS * 1_000);
    const offWorker = (await cpuSeconds(workerPid)) - w0;

    const id = `bench-${round}`;
    await server.recorder.start(room, id);
    await sleep(1_500); // every track's FFmpeg started and past its key frame
    const pids = await recorderPids(path.join(dir, id));
    const f0 = (await Promise.all(pids.map(cpuSeconds))).reduce((a, b) => a + b, 0);
    const w1 = await cpuSeconds(workerPid);
    await sleep(SECONDS * 1_000);
    const onWorker = (await cpuSeconds(workerPid)) - w1;
    const onFfmpeg = (await Promise.all(pids.map(cpuSeconds))).reduce((a, b) => a + b, 0) - f0;
    const manifest = await server.recorder.stop(id);

    const pct = (seconds: number) => (100 * seconds) / SECONDS / kinds.length;
    per.worker.push(pct(onWorker - offWorker));
    per.ffmpeg.push(pct(onFfmpeg));
    per.total.push(pct(onWorker - offWorker + onFfmpeg));
    console.log(
      `round ${round}: ${manifest.tracks.length} tracks (${pids.length} FFmpeg), worker ` +
        `${((100 * offWorker) / SECONDS).toFixed(1)}% → ${((100 * onWorker) / SECONDS).toFixed(1)}% ` +
        `of a core, FFmpeg ${((100 * onFfmpeg) / SECONDS).toFixed(1)}%`,
    );
  }
  const fmt = (values: number[]) => median(values).toFixed(2);
  console.log(
    `recording ${AUDIO} Opus + ${VIDEO} VP8 tracks: ${fmt(per.total)}% of one core per track ` +
      `(FFmpeg ${fmt(per.ffmpeg)}%, worker ${fmt(per.worker)}%), medians of ${ROUNDS} rounds`,
  );
  console.log(`recording_cpu_pct_per_track=${fmt(per.total)}`);
  console.log(`recording_ffmpeg_cpu_pct_per_track=${fmt(per.ffmpeg)}`);
  console.log(`recording_worker_cpu_pct_per_track=${fmt(per.worker)}`);
} finally {
  for (const f of feeders) f.kill('SIGKILL');
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
