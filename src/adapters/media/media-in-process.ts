/**
 * The orchestrator's transport to a media server in the same process (the embedded one):
 * each request goes through the server's own Fastify pipeline by `inject` (the internal
 * token checked, the body validated, the answer serialised, exactly as over HTTP), without
 * a socket, an HTTP client or a parser on either side. On the meetings bench those were
 * most of what a signalling request cost the node. Answers map as MediaHttp's do.
 */
import type { FastifyInstance } from 'fastify';
import { mediaServerError } from '../../meeting/media-orchestrator.js';
import { AppError } from '../../shared/errors.js';
import { answerOf, type MediaTransport } from './media-http.js';

export interface MediaInProcessOptions {
  readonly server: Pick<FastifyInstance, 'inject'>;
  readonly internalToken: string;
  /** Deadline of one request, as over HTTP: past it the caller gets a media server error. */
  readonly timeoutMs: number;
}

export class MediaInProcess implements MediaTransport {
  constructor(private readonly options: MediaInProcessOptions) {}

  async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const what = `${method} ${path}`;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const detail = `${what}: no answer within ${this.options.timeoutMs} ms`;
        reject(mediaServerError(detail, new Error(detail)));
      }, this.options.timeoutMs);
    });
    try {
      const response = await Promise.race([
        this.options.server.inject({
          method,
          url: path,
          headers: {
            accept: 'application/json',
            'x-internal-token': this.options.internalToken,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        }),
        deadline,
      ]);
      return answerOf<T>(what, response.statusCode, response.body);
    } catch (error) {
      if (error instanceof AppError) throw error;
      const detail = `${what}: ${error instanceof Error ? error.message : String(error)}`;
      throw mediaServerError(detail, new Error(detail, { cause: error }));
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Nothing to release: no sockets. Calls still go through after it, as MediaHttp's do (its
   * close only ends the kept-alive sockets); the server's own close is what ends them.
   */
  close(): void {}
}
