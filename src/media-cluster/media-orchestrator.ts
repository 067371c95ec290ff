/**
 * The meeting module's port to the media server (the seed's `MediaOrchestrator`): routers per
 * meeting, WebRTC transports, producers and consumers. The HTTP adapter is
 * src/adapters/media/http-media-orchestrator.ts; the meeting module depends only on this.
 *
 * Failures are AppErrors with one of two codes, as in the seed:
 * - `MEDIA_RESOURCE_NOT_FOUND` (`not_found`, `会议资源不存在`): the media server answered
 *   404. The close methods treat it as success (closing twice is not an error).
 * - `MEDIA_SERVER_ERROR` (`unavailable`, `会议媒体服务暂不可用`): 5xx, timeout, network
 *   error, or a refused internal token. Close methods retry these first.
 * A request the media server rejects as malformed (400/409) is a `validation`/`conflict`
 * AppError with the server's reason.
 */
import type { MediaDownload } from '../adapters/media/media-http.js';
import type { RecordingManifest } from '../media-server/recorder.js';
import { AppError } from '../shared/errors.js';
import { errors } from '../shared/error-codes.js';

/** mediasoup's JSON objects, passed through unchanged between client and media server. */
export type MediaJson = Record<string, unknown>;

/** A router as the client's `Device.load({ routerRtpCapabilities })` needs it. */
export interface RouterInfo {
  readonly routerId: string;
  readonly rtpCapabilities: MediaJson;
}

/** `ResolveRouterInfo`'s answer: `(routerId, rtpCapabilities, ok)`. */
export type ResolvedRouterInfo =
  | ({ readonly ok: true } & RouterInfo)
  | { readonly ok: false; readonly routerId: ''; readonly rtpCapabilities: null };

/** What `meeting.transport.create` acknowledges. */
export interface TransportInfo {
  readonly id: string;
  readonly iceParameters: MediaJson;
  readonly iceCandidates: MediaJson[];
  readonly dtlsParameters: MediaJson;
}

/**
 * What `….transport.plain.create` acknowledges: a plain RTP transport (no ICE, no DTLS) on
 * the media server's loopback address, for a client on that host (load tests). A `send`
 * transport learns its sender from the first packet; a `recv` one is connected to where
 * its consumers' RTP goes.
 */
export interface PlainTransportInfo {
  readonly id: string;
  readonly ip: string;
  readonly port: number;
}

/** What `meeting.consume.start` acknowledges; the consumer starts paused. */
export interface ConsumerInfo {
  readonly id: string;
  readonly producerId: string;
  readonly kind: 'audio' | 'video';
  readonly rtpParameters: MediaJson;
}

export type TransportDirection = 'send' | 'recv';
export type MediaKind = 'audio' | 'video';

/**
 * A producer's app data: at most 8 string values (≤ 128 characters) under `[a-z_]{1,32}`
 * keys, e.g. `{ user_id, mic_session_id, room_kind }`. The media server refuses anything
 * else (validation) and repeats it in every event about the producer.
 */
export type ProducerAppData = Readonly<Record<string, string>>;

/** What a viewer asks of one of its consumers (each optional). */
export interface ConsumerPreferences {
  /** 0 the smallest simulcast layer … 2 the largest. */
  readonly spatialLayer?: number | undefined;
  /** true: forward nothing (a tile nobody sees); false: forward again. */
  readonly paused?: boolean | undefined;
}

/** One open producer of a room, as `listProducers` reports it. */
export interface ProducerInfo {
  readonly producerId: string;
  readonly kind: MediaKind;
  readonly paused: boolean;
  /** The peer id given at its transport's creation; null if none. */
  readonly peerId: string | null;
  /** `{}` when it was created without app data. */
  readonly appData: ProducerAppData;
}

/** The seed's methods, in TypeScript's case. */
export interface MediaOrchestrator {
  /** The meeting's router; idempotent (a second call returns the same router). Cached. */
  createRouter(roomCode: string): Promise<RouterInfo>;
  /** Closes the meeting's router and everything on it; unknown router: success. */
  closeRouter(roomCode: string): Promise<void>;
  /**
   * A WebRTC transport on the meeting's router. `peerId` (e.g. the user id) is echoed in
   * the media events about this transport and what it carries.
   */
  createTransport(
    roomCode: string,
    direction: TransportDirection,
    peerId?: string,
  ): Promise<TransportInfo>;
  connectTransport(transportId: string, dtlsParameters: MediaJson): Promise<void>;
  /** A plain RTP transport on the room's router, listening on the server's loopback. */
  createPlainTransport(
    roomCode: string,
    direction: TransportDirection,
    peerId: string,
  ): Promise<PlainTransportInfo>;
  /** Where a plain `recv` transport sends its RTP: a loopback address of the server's host. */
  connectPlainTransport(transportId: string, ip: string, port: number): Promise<void>;
  /** Returns the producer id. `appData` is echoed in its events and in `listProducers`. */
  createProducer(
    transportId: string,
    kind: MediaKind,
    rtpParameters: MediaJson,
    appData?: ProducerAppData,
  ): Promise<string>;
  /** Creates the consumer paused: call {@link resumeConsumer} once the track is mounted. */
  createConsumer(
    transportId: string,
    producerId: string,
    rtpCapabilities: MediaJson,
  ): Promise<ConsumerInfo>;
  resumeConsumer(consumerId: string): Promise<void>;
  /** Whether the media server can record (it has FFmpeg). */
  recordingSupported(): Promise<boolean>;
  /**
   * Records the room (its live producers and those made later) as `recordingId`; nothing
   * new for a recording it already made (src/media-server/recorder.ts).
   */
  startRecording(roomCode: string, recordingId: string): Promise<RecordingManifest>;
  /** Stops the recording (its files are whole); one it lost is marked interrupted. */
  stopRecording(recordingId: string): Promise<RecordingManifest>;
  /** The recording's manifest: its tracks, their files and users. */
  recording(recordingId: string): Promise<RecordingManifest>;
  /** One of the recording's files, streamed (a `range` as the caller sent it). */
  recordingFile(recordingId: string, file: string, range?: string): Promise<MediaDownload>;
  /** The viewer's layer of a simulcast consumer (ignored for others), and its pause. */
  setConsumerPreferences(consumerId: string, preferences: ConsumerPreferences): Promise<void>;
  /** Pauses or resumes a producer: nothing of it is forwarded while paused. */
  setProducerPaused(producerId: string, paused: boolean): Promise<void>;
  closeTransport(transportId: string): Promise<void>;
  closeProducer(producerId: string): Promise<void>;
  closeConsumer(consumerId: string): Promise<void>;
  /** Every room that has a router on the media server (its room codes). */
  listRooms(): Promise<string[]>;
  /**
   * The open producers on the room's router, oldest first (to close those of a stale mic
   * session). A room without a router: MEDIA_RESOURCE_NOT_FOUND.
   */
  listProducers(roomCode: string): Promise<ProducerInfo[]>;
  /** The cached router of a meeting, without a network call; `ok: false` when unknown. */
  resolveRouterInfo(roomCode: string): ResolvedRouterInfo;
  /**
   * Drops the cached router of a room the server reported gone (`router_closed`,
   * `routers_lost`); with `routerId`, only while the cache still holds that router.
   */
  forgetRouter(roomCode: string, routerId?: string): void;
  /** Drops every cached router (the server's events stopped: what they missed is unknown). */
  forgetRouters(): void;
}

export function mediaResourceNotFound(detail: string, cause?: unknown): AppError {
  return errors.MEDIA_RESOURCE_NOT_FOUND.withCause(cause ?? new Error(detail));
}

export function mediaServerError(detail: string, cause?: unknown): AppError {
  return errors.MEDIA_SERVER_ERROR.withCause(cause ?? new Error(detail));
}

/** The seed's `errors.Is(err, ErrMediaResourceNotFound)`. */
export const isMediaResourceNotFound = (error: unknown): boolean =>
  error instanceof AppError && error.code === errors.MEDIA_RESOURCE_NOT_FOUND.code;

/** The seed's `errors.Is(err, ErrMediaServerError)`. */
export const isMediaServerError = (error: unknown): boolean =>
  error instanceof AppError && error.code === errors.MEDIA_SERVER_ERROR.code;
