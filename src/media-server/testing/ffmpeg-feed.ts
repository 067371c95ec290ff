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

/**
 * FFmpeg sending a 640×360 test pattern at 30 fps as a browser's simulcast camera would:
 * two VP8 encodings of the same picture, 320 and 640 pixels wide, at `bitrates` (bits per
 * second, smallest layer first), each as RTP and RTCP with its own SSRC to its own port; a
 * key frame every 2 s. Until killed, in real time.
 */
export function ffmpegSimulcastFeed(
  layers: readonly { port: number; ssrc: number; bitrate: number }[],
): ChildProcess {
  const [small, large] = layers;
  if (!small || !large || layers.length !== 2) throw new Error('two layers');
  const encode = (layer: { port: number; ssrc: number; bitrate: number }, stream: string) => [
    ...['-map', stream, '-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8'],
    ...['-b:v', String(layer.bitrate), '-maxrate', String(layer.bitrate)],
    ...['-bufsize', String(layer.bitrate), '-g', '60'],
    ...['-payload_type', '96', '-ssrc', String(layer.ssrc)],
    // RTCP (its sender reports) to the same port: a consumer switches layers only once it
    // can map each layer's timestamps to the others'.
    ...['-f', 'rtp', `rtp://127.0.0.1:${layer.port}?rtcpport=${layer.port}`],
  ];
  return spawn(
    'ffmpeg',
    [
      ...['-nostdin', '-loglevel', 'error', '-re'],
      ...['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30'],
      ...['-filter_complex', '[0:v]split[l][h];[l]scale=320:180[small]'],
      ...encode(small, '[small]'),
      ...encode(large, '[h]'),
    ],
    { stdio: 'ignore' },
  );
}
