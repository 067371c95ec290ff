/**
 * The load tester against one real node (embedded SQLite and media server), as a team would
 * point it at its deployment: both scenarios through the library entry, with every join,
 * command and owed frame accounted for; both again with real audio (`--media`: plain RTP
 * through the node's media server, every packet owed to a listener counted); the CLI's exit
 * codes and its `load_result` line (a clean run 0, a run with refusals 1, a bad option or an
 * unreachable target 2).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startMeetingNode, type MeetingNode } from '../../../src/main/testing/meeting-node.js';
import { parseLoadOptions } from '../src/options.js';
import { runLoad } from '../src/run.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const ADMIN = 'load-tester-admin-token';

void describe('the load tester', () => {
  let started: MeetingNode | undefined;
  let url: string;

  before(async () => {
    started = await startMeetingNode([], {
      ROOMS_ADMIN_TOKEN: ADMIN,
      ROOMS_VOICE_CHATS_PER_USER: '0',
      ROOMS_MEETING_CHATS_PER_USER: '0',
      ROOMS_MEDIA_PLAIN_RTP: 'true',
    });
    url = started.node.httpAddress;
  });
  after(async () => {
    await started?.close();
  });

  /** The CLI in a process of its own (the node under load runs in this one). */
  const cli = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'packages/load-tester/src/cli.ts', ...args],
        { cwd: ROOT },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  void it('loads voice rooms: joins, chat, seats and gifts, every frame delivered', async () => {
    const options = parseLoadOptions([
      ...['--url', url, '--scenario', 'voice', '--rooms', '2', '--listeners', '4'],
      ...['--duration', '3', '--chat-rate', '4', '--seat-rate', '2', '--gift-rate', '2'],
      ...['--admin-token', ADMIN],
    ]);
    const { summary, recorder } = await runLoad(options);
    assert.deepEqual([...recorder.errors], []);
    assert.equal(summary.joins, 8);
    const ops = recorder.operations();
    for (const name of ['chat', 'mic_up', 'mic_confirm', 'mic_down', 'gift']) {
      assert.ok((ops.get(name)?.length ?? 0) >= 3, `${name}: ${ops.get(name)?.length}`);
    }
    // Each command owes a frame to each of the room's 5 members, and each got it.
    const frames = ['chat', 'mic_up', 'mic_confirm', 'mic_down', 'gift']
      .map((name) => ops.get(name)!.length * 5)
      .reduce((a, b) => a + b);
    assert.equal(summary.framesOwed, frames);
    assert.equal(summary.framesGot, frames);
    assert.equal(summary.ok, true);
  });

  void it('loads meetings: joins over REST, the signalling, chat and hands', async () => {
    const options = parseLoadOptions([
      ...['--url', url, '--scenario', 'meeting', '--rooms', '2', '--listeners', '5'],
      ...['--duration', '3', '--chat-rate', '3', '--seat-rate', '3'],
    ]);
    const { summary, recorder, lines } = await runLoad(options);
    assert.deepEqual([...recorder.errors], []);
    assert.equal(summary.joins, 10);
    const ops = recorder.operations();
    assert.ok(ops.get('chat')!.length >= 6 && ops.get('hand')!.length >= 6);
    assert.equal(summary.framesOwed, (ops.get('chat')!.length + ops.get('hand')!.length) * 6);
    assert.equal(summary.framesGot, summary.framesOwed);
    assert.match(
      lines.at(-1)!,
      /^load_result scenario=meeting rooms=2 listeners=5 joins=10 .* ok=true$/,
    );
  });

  void it('carries audio in voice rooms: each seat cycle talks, every other member hears it', async () => {
    const options = parseLoadOptions([
      ...['--url', url, '--scenario', 'voice', '--rooms', '1', '--listeners', '4'],
      ...['--duration', '3', '--chat-rate', '0', '--seat-rate', '1', '--media', '--talk-ms', '600'],
    ]);
    const { summary, recorder, lines } = await runLoad(options);
    assert.deepEqual([...recorder.errors], []);
    const ops = recorder.operations();
    const cycles = ops.get('produce')?.length ?? 0;
    assert.ok(cycles >= 2, `produced ${cycles} times`);
    // 5 members (4 listeners and the owner) listen; each producer is heard by the 4 others.
    assert.equal(ops.get('listen')?.length, 5);
    assert.equal(ops.get('consume')?.length, cycles * 4);
    assert.equal(recorder.firstAudio.length, cycles * 4);
    // 30 packets a cycle; those sent before a listener's consumer resumed are not owed.
    const media = summary.media!;
    assert.ok(media.owed > cycles * 4 * 15 && media.owed <= cycles * 4 * 30, `owed ${media.owed}`);
    assert.ok(media.delivery >= 0.99, `delivered ${media.got} of ${media.owed}`);
    assert.equal(summary.ok, true);
    assert.match(
      lines.at(-1)!,
      / rtp_owed=\d+ rtp_delivered=\d+ rtp_delivery=[\d.]+ first_audio_p50_ms=[\d.]+ first_audio_p99_ms=[\d.]+ .*ok=true$/,
    );
  });

  void it('carries audio in meetings: the host talks, every member hears it', async () => {
    const options = parseLoadOptions([
      ...['--url', url, '--scenario', 'meeting', '--rooms', '1', '--listeners', '3'],
      ...['--duration', '2', '--chat-rate', '0', '--seat-rate', '0', '--media'],
    ]);
    const { summary, recorder } = await runLoad(options);
    assert.deepEqual([...recorder.errors], []);
    assert.equal(recorder.operations().get('consume')?.length, 3);
    // About 2 s at 50 packets a second, to each of 3 members.
    const media = summary.media!;
    assert.ok(media.owed > 3 * 60 && media.owed <= 3 * 100, `owed ${media.owed}`);
    assert.ok(media.delivery >= 0.99, `delivered ${media.got} of ${media.owed}`);
  });

  void it('exits 0 on a clean run, 1 when commands are refused, 2 on bad options', async () => {
    const clean = await cli('--url', url, '--rooms', '1', '--listeners', '2', '--duration', '1');
    assert.equal(clean.status, 0, clean.stderr + clean.stdout);
    assert.match(clean.stdout, /^load_result scenario=voice .* errors=0 .* ok=true$/m);

    // A meeting holds 8 (the seed): the ninth member's join is refused, and counted.
    const full = await cli(
      ...['--url', url, '--scenario', 'meeting', '--rooms', '1', '--listeners', '8'],
      ...['--duration', '1', '--chat-rate', '0', '--seat-rate', '0'],
    );
    assert.equal(full.status, 1, full.stderr + full.stdout);
    assert.match(full.stdout, /join:MEETING_FULL 1/);
    assert.match(full.stdout, /joins=7 .* errors=1 .* ok=false$/m);

    const bad = await cli('--url', url, '--rooms', 'many');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--rooms: an integer/);
    const gifts = await cli('--url', url, '--gift-rate', '1');
    assert.equal(gifts.status, 2);
    assert.match(gifts.stderr, /--gift-rate needs --admin-token/);
    const nobody = await cli('--url', 'http://127.0.0.1:9', '--duration', '1');
    assert.equal(nobody.status, 2);
    assert.match(nobody.stderr, /^load: /m);
  });

  void it('exits 1 for --media where the target keeps plain RTP off: no audio is no pass', async () => {
    const off = await startMeetingNode([], { ROOMS_MEETING_CHATS_PER_USER: '0' });
    try {
      const run = await cli(
        ...['--url', off.node.httpAddress, '--scenario', 'meeting', '--rooms', '1'],
        ...['--listeners', '2', '--duration', '1', '--chat-rate', '1', '--media'],
      );
      assert.equal(run.status, 1, run.stderr + run.stdout);
      assert.match(run.stdout, /listen:MEDIA_PLAIN_RTP_OFF 3/);
      assert.match(run.stdout, /produce:MEDIA_PLAIN_RTP_OFF 1/);
      assert.match(run.stdout, / rtp_owed=0 rtp_delivered=0 rtp_delivery=0\.0000 .* ok=false$/m);
    } finally {
      await off.close();
    }
  });
});
