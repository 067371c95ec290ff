/**
 * Test-only: a recorded file as ffprobe reads it: its codec, and the time between its first
 * and last packet (a live WebM states no duration; for an Ogg it is the same figure).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export async function probeRecording(file: string): Promise<{ codec: string; duration: number }> {
  const { stdout } = await promisify(execFile)('ffprobe', [
    ...['-v', 'error', '-show_entries', 'stream=codec_name:packet=pts_time'],
    ...['-of', 'json', file],
  ]);
  const parsed = JSON.parse(stdout) as {
    streams: { codec_name: string }[];
    packets: { pts_time: string }[];
  };
  const times = parsed.packets.map((p) => Number(p.pts_time)).filter(Number.isFinite);
  return {
    codec: parsed.streams[0]!.codec_name,
    duration: Math.max(...times) - Math.min(...times),
  };
}
