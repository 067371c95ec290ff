/**
 * Test-only: real RTP from FFmpeg into a plain transport, as a browser's tracks would
 * arrive (an Opus tone, a VP8 test pattern), and the RTP parameters of the producer that
 * takes it. Used by the recording tests and bench.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/**
 * FFmpeg sending a tone (Opus, payload type 111) or a test pattern (VP8 320×240 at 15 fps,
 * payload type 96, a key frame every `keyFrameEvery` frames) as RTP to `port`, for
 * `seconds` (unset: until killed), in real time.
 */
export function ffmpegFeed(
  kind: 'audio' | 'video',
  port: number,
  ssrc: number,
  options: { seconds?: number; keyFrameEvery?: number } = {},
): ChildProcess {
  const duration = options.seconds === undefined ? '' : `:duration=${options.seconds}`;
  const source =
    kind === 'audio'
      ? ['-f', 'lavfi', '-i', `sine=frequency=440${duration}`, '-c:a', 'libopus']
      : [
          ...['-f', 'lavfi', '-i', `testsrc=size=320x240:rate=15${duration}`],
          ...['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '300k'],
          ...['-g', String(options.keyFrameEvery ?? 5)],
        ];
  return spawn(
    'ffmpeg',
    [
      ...['-nostdin', '-loglevel', 'error', '-re'],
      ...source,
      ...['-payload_type', kind === 'audio' ? '111' : '96', '-ssrc', String(ssrc)],
      ...['-f', 'rtp', `rtp://127.0.0.1:${port}`],
    ],
    { stdio: 'ignore' },
  );
}

/** The RTP parameters of a producer fed by {@link ffmpegFeed}. */
export function feedRtpParameters(kind: 'audio' | 'video', ssrc: number) {
  return kind === 'audio'
    ? {
        codecs: [{ mimeType: 'audio/opus', payloadType: 111, clockRate: 48000, channels: 2 }],
        encodings: [{ ssrc }],
      }
    : {
        codecs: [
          {
            mimeType: 'video/VP8',
            payloadType: 96,
            clockRate: 90000,
            rtcpFeedback: [{ type: 'nack', parameter: 'pli' }],
          },
        ],
        encodings: [{ ssrc }],
      };
}
