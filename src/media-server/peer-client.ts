/**
 * Calls another media server's internal API: the origin of a room reaching the server that
 * holds one of the room's edges (./remote-edge.ts). The nodes' own client of the internal API
 * (../adapters/media/media-http.ts: kept-alive connections, the cluster's shared token, a
 * deadline) carries it; an unreachable server, or one that does not answer in time, is
 * `unavailable`.
 */
import { MediaHttp, type Envelope } from '../adapters/media/media-http.js';
import { errors } from '../shared/error-codes.js';

/** Another live media server of the cluster, as its registration names it. */
export interface PeerServer {
  readonly id: string;
  /** Its internal API (`http://host:port`). */
  readonly url: string;
}

/** An answer as the other server gave it: its status and its envelope. */
export interface PeerAnswer {
  readonly status: number;
  readonly body: Envelope;
}

export class PeerClient {
  readonly #http: MediaHttp;

  constructor(
    readonly server: PeerServer,
    readonly internalToken: string,
    timeoutMs: number,
  ) {
    this.#http = new MediaHttp({ baseUrl: server.url, internalToken, timeoutMs });
  }

  /** The answer as given, to forward unchanged; a body that is not JSON is `unavailable`. */
  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<PeerAnswer> {
    const withBody = method === 'POST' ? (body ?? {}) : undefined;
    const { status, envelope } = await this.#http.exchange(method, path, withBody);
    if (!envelope) {
      throw errors.MEDIA_SERVER_ERROR.withCause(new Error(`${this.server.id}: no JSON answer`));
    }
    return { status, body: envelope };
  }

  /** The `data` of a successful answer; a failure is mapped as the nodes' client maps it. */
  data<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    return this.#http.call<T>(method, path, method === 'POST' ? (body ?? {}) : undefined);
  }

  close(): void {
    this.#http.close();
  }
}
