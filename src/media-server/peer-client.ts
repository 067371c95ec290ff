/**
 * Calls another media server's internal API (the cluster's shared token, a timeout): the
 * origin of a room reaching the server that holds one of the room's edges (./remote-edge.ts).
 * An unreachable server, or one that does not answer in time, is `unavailable`.
 */
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
  readonly body: { readonly code?: unknown; readonly data?: unknown; readonly message?: unknown };
}

export class PeerClient {
  constructor(
    readonly server: PeerServer,
    readonly internalToken: string,
    private readonly timeoutMs: number,
  ) {}

  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<PeerAnswer> {
    const withBody = method === 'POST';
    let response: Response;
    try {
      response = await fetch(new URL(path, this.server.url), {
        method,
        headers: {
          'x-internal-token': this.internalToken,
          ...(withBody ? { 'content-type': 'application/json' } : {}),
        },
        ...(withBody ? { body: JSON.stringify(body ?? {}) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw errors.MEDIA_SERVER_ERROR.withCause(error);
    }
    const parsed: unknown = await response.json().catch(() => null);
    if (parsed === null || typeof parsed !== 'object') {
      throw errors.MEDIA_SERVER_ERROR.withCause(new Error(`${this.server.id}: no JSON answer`));
    }
    return { status: response.status, body: parsed };
  }

  /** The `data` of a successful answer; any other answer is `unavailable`. */
  async data<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const answer = await this.call(method, path, body);
    if (answer.status >= 300) {
      const detail = `${this.server.id} answered ${answer.status}: ${String(answer.body.message)}`;
      throw errors.MEDIA_SERVER_ERROR.withCause(new Error(detail));
    }
    return answer.body.data as T;
  }
}
