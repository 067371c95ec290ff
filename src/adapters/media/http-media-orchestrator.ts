/**
 * MediaOrchestrator over the media server's internal HTTP API. Adds what the seed asks of the
 * client: close calls that are idempotent (404 = already closed) and retried on media
 * server errors (200 ms, then 500 ms apart, `closeRetry + 1` attempts), and a cache of each
 * meeting's router id and RTP capabilities for `resolveRouterInfo`.
 */
import type { Logger } from 'pino';
import {
  isMediaResourceNotFound,
  isMediaServerError,
  type ConsumerInfo,
  type ConsumerPreferences,
  type MediaJson,
  type MediaKind,
  type MediaOrchestrator,
  type ProducerAppData,
  type ProducerInfo,
  type ResolvedRouterInfo,
  type RouterInfo,
  type TransportDirection,
  type PlainTransportInfo,
  type TransportInfo,
} from '../../media-cluster/media-orchestrator.js';
import { MediaHttp, type MediaDownload } from './media-http.js';
import type { RecordingManifest } from '../../media-server/recorder.js';

export interface HttpMediaOrchestratorOptions {
  /** `http://host:port` of the media server. */
  readonly baseUrl: string;
  readonly internalToken: string;
  /** Deadline of one request. */
  readonly timeoutMs: number;
  /** Extra attempts of a close call after a media server error. */
  readonly closeRetry: number;
  readonly logger?: Logger;
  /** Injected in tests to observe the backoff without waiting. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Backoff before retry n (0-based): 200 ms, then 500 ms. */
export const closeRetryDelayMs = (retry: number): number => Math.min(200 * 2.5 ** retry, 500);

/** What the media server's `/internal/info` says of its load. */
export interface MediaServerInfo {
  readonly workers: readonly { readonly alive: boolean }[];
  readonly stats: {
    readonly routers: number;
    readonly transports: number;
    readonly producers: number;
    readonly consumers: number;
  };
}

interface RouterView {
  router_id: string;
  rtp_capabilities: MediaJson;
}

interface ProducerView {
  producer_id: string;
  kind: MediaKind;
  paused: boolean;
  peer_id: string | null;
  app_data: ProducerAppData;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const path = (kind: string, id: string, action: string) =>
  `/internal/v1/${kind}/${encodeURIComponent(id)}/${action}`;

export class HttpMediaOrchestrator implements MediaOrchestrator {
  readonly #http: MediaHttp;
  /** roomCode → router; filled by createRouter, emptied by closeRouter / forgetRouter. */
  readonly #routers = new Map<string, RouterInfo>();
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: HttpMediaOrchestratorOptions) {
    this.#http = new MediaHttp(options);
    this.#sleep = options.sleep ?? defaultSleep;
  }

  async createRouter(roomCode: string): Promise<RouterInfo> {
    const view = await this.#http.call<RouterView>('POST', '/internal/v1/routers', {
      room_code: roomCode,
    });
    const info: RouterInfo = { routerId: view.router_id, rtpCapabilities: view.rtp_capabilities };
    this.#routers.set(roomCode, info);
    return info;
  }

  /** `GET /internal/info`: the server's workers and its open resources (for metrics). */
  async serverInfo(): Promise<MediaServerInfo> {
    const view = await this.#http.call<{
      workers: { alive: boolean }[];
      stats: MediaServerInfo['stats'];
    }>('GET', '/internal/info');
    return { workers: view.workers.map((w) => ({ alive: w.alive === true })), stats: view.stats };
  }

  async listRooms(): Promise<string[]> {
    const view = await this.#http.call<{ room_codes: string[] }>('GET', '/internal/v1/rooms');
    return view.room_codes;
  }

  async listProducers(roomCode: string): Promise<ProducerInfo[]> {
    const view = await this.#http.call<{ producers: ProducerView[] }>(
      'GET',
      `/internal/v1/rooms/${encodeURIComponent(roomCode)}/producers`,
    );
    return view.producers.map((p) => ({
      producerId: p.producer_id,
      kind: p.kind,
      paused: p.paused,
      peerId: p.peer_id,
      appData: p.app_data,
    }));
  }

  async closeRouter(roomCode: string): Promise<void> {
    let routerId = this.#routers.get(roomCode)?.routerId;
    if (!routerId) {
      // Not created through this client (e.g. before a restart): ask the server.
      try {
        const view = await this.#http.call<RouterView>(
          'GET',
          `/internal/v1/rooms/${encodeURIComponent(roomCode)}/router`,
        );
        routerId = view.router_id;
      } catch (error) {
        if (isMediaResourceNotFound(error)) return;
        throw error;
      }
    }
    await this.#close('routers', routerId);
    this.#routers.delete(roomCode);
  }

  async createTransport(
    roomCode: string,
    direction: TransportDirection,
    peerId?: string,
  ): Promise<TransportInfo> {
    const view = await this.#http.call<TransportInfo>('POST', '/internal/v1/transports', {
      room_code: roomCode,
      direction,
      ...(peerId === undefined ? {} : { peer_id: peerId }),
    });
    const { id, iceParameters, iceCandidates, dtlsParameters } = view;
    return { id, iceParameters, iceCandidates, dtlsParameters };
  }

  async connectTransport(transportId: string, dtlsParameters: MediaJson): Promise<void> {
    await this.#http.call('POST', path('transports', transportId, 'connect'), {
      dtls_parameters: dtlsParameters,
    });
  }

  async createPlainTransport(
    roomCode: string,
    direction: TransportDirection,
    peerId: string,
  ): Promise<PlainTransportInfo> {
    const view = await this.#http.call<PlainTransportInfo>('POST', '/internal/v1/transports', {
      room_code: roomCode,
      direction,
      peer_id: peerId,
      type: 'plain',
    });
    return { id: view.id, ip: view.ip, port: view.port };
  }

  async connectPlainTransport(transportId: string, ip: string, port: number): Promise<void> {
    await this.#http.call('POST', path('transports', transportId, 'connect'), { ip, port });
  }

  async createProducer(
    transportId: string,
    kind: MediaKind,
    rtpParameters: MediaJson,
    appData?: ProducerAppData,
  ): Promise<string> {
    const view = await this.#http.call<{ id: string }>('POST', '/internal/v1/producers', {
      transport_id: transportId,
      kind,
      rtp_parameters: rtpParameters,
      ...(appData === undefined ? {} : { app_data: appData }),
    });
    return view.id;
  }

  async createConsumer(
    transportId: string,
    producerId: string,
    rtpCapabilities: MediaJson,
  ): Promise<ConsumerInfo> {
    const view = await this.#http.call<ConsumerInfo>('POST', '/internal/v1/consumers', {
      transport_id: transportId,
      producer_id: producerId,
      rtp_capabilities: rtpCapabilities,
    });
    const { id, kind, rtpParameters } = view;
    return { id, producerId: view.producerId, kind, rtpParameters };
  }

  async resumeConsumer(consumerId: string): Promise<void> {
    await this.#http.call('POST', path('consumers', consumerId, 'resume'));
  }

  async recordingSupported(): Promise<boolean> {
    const view = await this.#http.call<{ available: boolean }>(
      'GET',
      '/internal/v1/recordings/support',
    );
    return view.available;
  }

  startRecording(roomCode: string, recordingId: string): Promise<RecordingManifest> {
    return this.#http.call(
      'POST',
      `/internal/v1/rooms/${encodeURIComponent(roomCode)}/recordings`,
      {
        recording_id: recordingId,
      },
    );
  }

  stopRecording(recordingId: string): Promise<RecordingManifest> {
    return this.#http.call('POST', path('recordings', recordingId, 'stop'));
  }

  recording(recordingId: string): Promise<RecordingManifest> {
    return this.#http.call('GET', `/internal/v1/recordings/${encodeURIComponent(recordingId)}`);
  }

  recordingFile(recordingId: string, file: string, range?: string): Promise<MediaDownload> {
    return this.#http.download(
      path('recordings', recordingId, `files/${encodeURIComponent(file)}`),
      range,
    );
  }

  async setConsumerPreferences(
    consumerId: string,
    preferences: ConsumerPreferences,
  ): Promise<void> {
    await this.#http.call('POST', path('consumers', consumerId, 'preferences'), {
      ...(preferences.spatialLayer === undefined
        ? {}
        : { spatial_layer: preferences.spatialLayer }),
      ...(preferences.paused === undefined ? {} : { paused: preferences.paused }),
    });
  }

  async setProducerPaused(producerId: string, paused: boolean): Promise<void> {
    await this.#http.call('POST', path('producers', producerId, paused ? 'pause' : 'resume'));
  }

  closeTransport(transportId: string): Promise<void> {
    return this.#close('transports', transportId);
  }

  closeProducer(producerId: string): Promise<void> {
    return this.#close('producers', producerId);
  }

  closeConsumer(consumerId: string): Promise<void> {
    return this.#close('consumers', consumerId);
  }

  resolveRouterInfo(roomCode: string): ResolvedRouterInfo {
    const info = this.#routers.get(roomCode);
    return info ? { ok: true, ...info } : { ok: false, routerId: '', rtpCapabilities: null };
  }

  forgetRouter(roomCode: string, routerId?: string): void {
    const cached = this.#routers.get(roomCode);
    if (cached && (routerId === undefined || cached.routerId === routerId)) {
      this.#routers.delete(roomCode);
    }
  }

  forgetRouters(): void {
    this.#routers.clear();
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.#http.close();
  }

  /** POST …/close: 404 counts as closed; media server errors are retried with backoff. */
  async #close(kind: string, id: string): Promise<void> {
    const attempts = this.options.closeRetry + 1;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#http.call('POST', path(kind, id, 'close'));
        return;
      } catch (error) {
        if (isMediaResourceNotFound(error)) return;
        if (!isMediaServerError(error) || attempt >= attempts) throw error;
        const delay = closeRetryDelayMs(attempt - 1);
        this.options.logger?.warn(
          { err: error, kind, id, attempt, retryInMs: delay },
          'media close failed; retrying',
        );
        await this.#sleep(delay);
      }
    }
  }
}
