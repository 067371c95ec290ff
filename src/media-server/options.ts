/**
 * What the media server needs to run. ./config.ts maps the `ROOMS_MEDIA_*` variables to
 * this (standalone, and for the rooms node's embedded server); tests build it directly.
 */
import type { RecorderOptions } from './recorder.js';
import type { types } from 'mediasoup';

/** Settings of one media-server instance (one process, N mediasoup workers). */
export interface MediaServerOptions {
  /** Address of the internal HTTP API. Keep it private: it trusts the token alone. */
  readonly host: string;
  /** Port of the internal HTTP API; 0 picks a free one. */
  readonly port: number;
  /** Shared secret every `/internal/*` request carries in `X-Internal-Token`. */
  readonly internalToken: string;
  /** Number of mediasoup workers (one per core is mediasoup's advice). */
  readonly workers: number;
  /** Explicit worker binary; null: found by {@link resolveWorkerBin}. */
  readonly workerBin: string | null;
  /** IP the RTC sockets bind to. */
  readonly listenIp: string;
  /** Address put in ICE candidates instead of `listenIp` (behind NAT, or with 0.0.0.0). */
  readonly announcedAddress: string | null;
  /** RTC port range (UDP/TCP) of per-transport sockets. */
  readonly rtcMinPort: number;
  readonly rtcMaxPort: number;
  /**
   * First port of the optional WebRtcServer: worker i listens on `port + i` (UDP and TCP)
   * and every WebRTC transport of that worker shares it. Null: one port per transport.
   */
  readonly webRtcServerPort: number | null;
  /** mediasoup's own log level inside the workers. */
  readonly workerLogLevel: types.WorkerLogLevel;
  /**
   * Seconds without an ICE consent check from the client after which a transport reports
   * `ice_disconnected` (mediasoup's default, 30, when unset).
   */
  readonly iceConsentTimeoutS?: number;
  /** Pauses before restarting a dead worker, per attempt (default 100 ms, 1 s, 5 s…). */
  readonly workerRestartDelaysMs?: readonly number[];
  /**
   * A router's consumer budget: past it, a room's next listener goes to another of its
   * routers, or a new edge router (default {@link DEFAULT_ROUTER_CONSUMERS}).
   */
  readonly routerConsumers?: number;
  /** How long an edge router without listeners stays open (default 10 s). */
  readonly edgeLingerMs?: number;
  /**
   * IP the pipes between media servers bind to (an edge on another server receives a
   * room's producers there); null: `listenIp`. Keep it on the servers' private network.
   */
  readonly pipeListenIp?: string | null;
  /** Address the other server sends pipe RTP to instead of `pipeListenIp`; null: `announcedAddress`. */
  readonly pipeAnnouncedAddress?: string | null;
  /**
   * How long a server holding one of this server's edges may be unreachable before the
   * edge counts as lost and its listeners are reset (default {@link DEFAULT_PEER_LOST_MS}).
   */
  readonly peerLostMs?: number;
  /** Where and with what recordings are made (./recorder.ts); absent: a directory under the OS's temp. */
  readonly recordings?: RecorderOptions;
}

/**
 * One worker forwarded 8 talking seats to about 750 plain-RTP listeners (6,000 consumers)
 * at ≤ 1 % loss in bench:voice-media, with the load generator on the same two cores: a
 * budget of two thirds of that leaves the worker headroom for WebRTC's SRTP.
 */
export const DEFAULT_ROUTER_CONSUMERS = 4_000;
export const DEFAULT_EDGE_LINGER_MS = 10_000;
export const DEFAULT_PEER_LOST_MS = 3_000;

/**
 * Codecs of every router: Opus for audio; VP8 (what browsers send by default) and H264
 * (constrained baseline, hardware encoders and Safari) for video.
 */
export const MEDIA_CODECS: types.RouterRtpCodecCapability[] = [
  { kind: 'audio', mimeType: 'audio/opus', clockRate: 48000, channels: 2 },
  { kind: 'video', mimeType: 'video/VP8', clockRate: 90000, parameters: {} },
  {
    kind: 'video',
    mimeType: 'video/H264',
    clockRate: 90000,
    parameters: {
      'packetization-mode': 1,
      'profile-level-id': '42e01f',
      'level-asymmetry-allowed': 1,
    },
  },
];

/** Defaults for tests and tools: loopback only, one worker, random ports. */
export function mediaServerTestOptions(overrides: Partial<MediaServerOptions> = {}) {
  return {
    host: '127.0.0.1',
    port: 0,
    internalToken: 'test-internal-token',
    workers: 1,
    workerBin: null,
    listenIp: '127.0.0.1',
    announcedAddress: null,
    rtcMinPort: 40000,
    rtcMaxPort: 49999,
    webRtcServerPort: null,
    workerLogLevel: 'error',
    ...overrides,
  } satisfies MediaServerOptions;
}
