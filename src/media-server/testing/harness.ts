/**
 * Test-only helpers for the media-server tests: whether a worker binary exists (skip with a
 * hint locally, fail in CI), a server on loopback with free ports, an HTTP caller, and
 * minimal valid RTP/DTLS parameters.
 */
import pino from 'pino';
import { mediaServerTestOptions, type MediaServerOptions } from '../options.js';
import { startMediaServer, type MediaServer } from '../server.js';
import { resolveWorkerBin, WORKER_BIN_HINT } from '../worker-bin.js';

export const TEST_TOKEN = 'test-internal-token';

/**
 * `false` when a mediasoup-worker binary is available, else a one-line skip reason. In CI
 * (`CI=true`) a missing binary throws instead: .ci/run builds it, so these tests never skip.
 */
export function mediaSkipReason(): string | false {
  if (resolveWorkerBin(process.env.ROOMS_MEDIA_WORKER_BIN ?? null, process.env)) return false;
  if (process.env.CI === 'true') {
    throw new Error(`mediasoup tests must not skip in CI: ${WORKER_BIN_HINT}`);
  }
  return WORKER_BIN_HINT;
}

/** A media server on 127.0.0.1 with free ports; logs only with ROOMS_TEST_LOG set. */
export function startTestMediaServer(
  overrides: Partial<MediaServerOptions> = {},
): Promise<MediaServer> {
  const logger = pino({ level: process.env.ROOMS_TEST_LOG ?? 'silent' });
  return startMediaServer(
    mediaServerTestOptions({
      internalToken: TEST_TOKEN,
      workerBin: process.env.ROOMS_MEDIA_WORKER_BIN ?? null,
      ...overrides,
    }),
    logger,
  );
}

/** The envelope every internal endpoint answers with. */
export interface Envelope<T = Record<string, unknown>> {
  code: number;
  message: string;
  reason?: string;
  data: T;
}

export interface CallResult<T> {
  status: number;
  body: Envelope<T>;
}

/** One internal API call; `token: null` sends none. */
export async function call<T = Record<string, unknown>>(
  server: { url: string },
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  token: string | null = TEST_TOKEN,
): Promise<CallResult<T>> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(token === null ? {} : { 'x-internal-token': token }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Envelope<T> };
}

/** A DTLS fingerprint of the right shape (nothing checks it before a real handshake). */
export const CLIENT_DTLS = {
  role: 'client',
  fingerprints: [
    {
      algorithm: 'sha-256',
      value:
        '82:5A:68:3D:36:C3:0A:DE:AF:E7:32:43:D2:88:83:57:AC:2D:65:E5:80:C4:B6:FB:AF:1A:A0:21:9F:6D:0C:AD',
    },
  ],
};

/** RTP parameters of an Opus producer with one SSRC. */
export function opusRtpParameters(ssrc = 11111111) {
  return {
    mid: '0',
    codecs: [
      {
        mimeType: 'audio/opus',
        payloadType: 111,
        clockRate: 48000,
        channels: 2,
        parameters: { useinbandfec: 1 },
        rtcpFeedback: [],
      },
    ],
    headerExtensions: [],
    encodings: [{ ssrc }],
    rtcp: { cname: 'test', reducedSize: true },
  };
}

/** RTP parameters of a VP8 producer with one SSRC. */
export function vp8RtpParameters(ssrc = 22222222) {
  return {
    mid: '1',
    codecs: [
      {
        mimeType: 'video/VP8',
        payloadType: 96,
        clockRate: 90000,
        parameters: {},
        rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }],
      },
    ],
    headerExtensions: [],
    encodings: [{ ssrc }],
    rtcp: { cname: 'test', reducedSize: true },
  };
}

/** Polls `check` every 25 ms until it returns a value other than undefined. */
export async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Shapes of the internal API's answers that the tests read. */
export interface RouterData {
  router_id: string;
  room_code: string;
  rtp_capabilities: { codecs: { mimeType: string }[] };
  created: boolean;
  worker_pid: number;
}
export interface TransportData {
  id: string;
  iceParameters: { usernameFragment: string };
  iceCandidates: { ip: string; port: number; protocol: string }[];
  dtlsParameters: { fingerprints: unknown[] };
}
export interface InfoData {
  stats: { routers: number; transports: number; producers: number; consumers: number };
  workers: { pid: number; alive: boolean }[];
  /** Taking no new rooms (POST /internal/v1/drain, or SIGTERM). */
  draining: boolean;
}

let seq = 0;
/** A fresh meeting room code `XXX-XXX-XXX`, distinct per call and per process. */
export const room = () =>
  `${String(100 + (++seq % 900))}-${String(process.pid % 1000).padStart(3, '0')}-${String(seq).padStart(3, '0')}`;
