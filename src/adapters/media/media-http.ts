/**
 * The HTTP transport of the orchestrator: keep-alive connections to the media server, a
 * deadline per request, the internal token, and the envelope's answer mapped to the
 * MediaOrchestrator error kinds (404 → resource not found; 5xx, timeout, network, refused
 * token → media server error; 400/409 → validation/conflict with the server's reason).
 */
import http from 'node:http';
import https from 'node:https';
import { mediaResourceNotFound, mediaServerError } from '../../media-cluster/media-orchestrator.js';
import { errors } from '../../shared/error-codes.js';
import { AppError } from '../../shared/errors.js';

export interface MediaHttpOptions {
  /** `http://host:port` of the media server. */
  readonly baseUrl: string;
  readonly internalToken: string;
  /** Deadline of one request, connect to last byte. */
  readonly timeoutMs: number;
  /** Most parallel connections (default 64). */
  readonly maxSockets?: number;
}

export interface Envelope {
  code?: number;
  message?: string;
  reason?: string;
  data?: unknown;
}

/** Seconds an idle kept-alive socket may live; below Fastify's 72 s so we close it first. */
const IDLE_SOCKET_MS = 30_000;

/** A file the media server streams back (./media-http.ts `download`). */
export interface MediaDownload {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: NodeJS.ReadableStream;
}

export class MediaHttp {
  readonly #agent: http.Agent;
  readonly #client: typeof http | typeof https;

  constructor(private readonly options: MediaHttpOptions) {
    const secure = options.baseUrl.startsWith('https:');
    this.#client = secure ? https : http;
    const agentOptions = {
      keepAlive: true,
      maxSockets: options.maxSockets ?? 64,
      timeout: IDLE_SOCKET_MS,
    };
    this.#agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /** Sends one request and returns the envelope's `data`, or throws the mapped AppError. */
  async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const { status, envelope } = await this.exchange(method, path, body);
    const what = `${method} ${path}`;
    if (status >= 200 && status < 300) {
      if (!envelope) throw mediaServerError(`${what}: HTTP ${status} with a body that is not JSON`);
      return envelope.data as T;
    }
    throw mapFailure(what, status, envelope ?? {});
  }

  /**
   * Sends one request and returns the answer as given: its status and envelope (null when
   * the body is not JSON). Only a network failure or the deadline throws (media server
   * error). What forwards another server's answer unchanged uses this.
   */
  exchange(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; envelope: Envelope | null }> {
    const what = `${method} ${path}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: http.OutgoingHttpHeaders = {
      accept: 'application/json',
      'x-internal-token': this.options.internalToken,
      ...(payload === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
    };
    return new Promise((resolve, reject) => {
      const fail = (error: unknown) => {
        const timedOut = error instanceof Error && error.name === 'AbortError';
        const detail = timedOut
          ? `${what}: no answer within ${this.options.timeoutMs} ms`
          : `${what}: ${error instanceof Error ? error.message : String(error)}`;
        reject(mediaServerError(detail, new Error(detail, { cause: error })));
      };
      const request = this.#client.request(
        new URL(path, this.options.baseUrl),
        {
          method,
          headers,
          agent: this.#agent,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', fail);
          response.on('end', () => {
            let envelope: Envelope | null = null;
            try {
              const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
              if (parsed !== null && typeof parsed === 'object') envelope = parsed;
            } catch {
              /* not JSON: null */
            }
            resolve({ status: response.statusCode ?? 0, envelope });
          });
        },
      );
      request.on('error', fail);
      request.end(payload);
    });
  }

  /**
   * A GET whose answer is a file, streamed as it comes (a recording's track): its status,
   * the headers a download needs, and the body. `range` is passed on as given.
   */
  download(path: string, range?: string): Promise<MediaDownload> {
    const what = `GET ${path}`;
    return new Promise((resolve, reject) => {
      const request = this.#client.request(
        new URL(path, this.options.baseUrl),
        {
          method: 'GET',
          headers: {
            'x-internal-token': this.options.internalToken,
            ...(range === undefined ? {} : { range }),
          },
          agent: this.#agent,
        },
        (response) => {
          const pick = (name: string) => {
            const value = response.headers[name];
            return typeof value === 'string' ? { [name]: value } : {};
          };
          resolve({
            status: response.statusCode ?? 0,
            headers: {
              ...pick('content-type'),
              ...pick('content-length'),
              ...pick('content-range'),
              ...pick('accept-ranges'),
              ...pick('last-modified'),
              ...pick('etag'),
            },
            body: response,
          });
        },
      );
      // Only until the answer starts: a long download is not cut.
      request.setTimeout(this.options.timeoutMs, () =>
        request.destroy(new Error(`${what}: no answer within ${this.options.timeoutMs} ms`)),
      );
      request.on('error', (error) => reject(mediaServerError(`${what}: ${error.message}`, error)));
      request.end();
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.#agent.destroy();
  }
}

function mapFailure(what: string, status: number, envelope: Envelope): AppError {
  const detail =
    `${what}: HTTP ${status} ${envelope.reason ?? ''} ${envelope.message ?? ''}`.trim();
  if (status === 404) return mediaResourceNotFound(detail);
  if (status === 400) {
    return new AppError(
      'validation',
      envelope.reason ?? errors.MEDIA_BAD_REQUEST.code,
      envelope.message ?? detail,
    );
  }
  if (status === 409) {
    return new AppError(
      'conflict',
      envelope.reason ?? errors.MEDIA_CONFLICT.code,
      envelope.message ?? detail,
    );
  }
  // 401/403 mean our token is wrong: a deployment fault, reported as the server being unusable.
  return mediaServerError(detail);
}
