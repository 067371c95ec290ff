/**
 * Client of `GET /internal/v1/events`: follows the media server's event stream, reconnects
 * after a drop and resumes from the last event seen (`Last-Event-ID`), so room logic in
 * another process gets every transport, producer and router event in order.
 */
import http from 'node:http';
import type { Logger } from 'pino';
import type { MediaEvent } from '../../media-server/events.js';

export interface MediaEventStreamOptions {
  readonly baseUrl: string;
  readonly internalToken: string;
  /** Pause before reconnecting after a drop. */
  readonly reconnectMs?: number;
  readonly logger?: Logger;
  /**
   * The stream dropped: until it is back, and for a restarted server for good, events are
   * missed (what the listener keeps from them may be stale). Once per drop.
   */
  readonly onDrop?: () => void;
}

export class MediaEventStream {
  #request: http.ClientRequest | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastSeq: number | undefined;
  #closed = false;
  #ready: Promise<void>;
  #markReady!: () => void;

  constructor(
    private readonly options: MediaEventStreamOptions,
    private readonly listener: (event: MediaEvent) => void,
  ) {
    this.#ready = new Promise((resolve) => (this.#markReady = resolve));
    this.#connect();
  }

  /** Resolves once the first connection is established (events from then on are seen). */
  get ready(): Promise<void> {
    return this.#ready;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#request?.destroy();
  }

  #connect(): void {
    const headers: http.OutgoingHttpHeaders = {
      accept: 'text/event-stream',
      'x-internal-token': this.options.internalToken,
      ...(this.#lastSeq === undefined ? {} : { 'last-event-id': String(this.#lastSeq) }),
    };
    const request = http.get(
      new URL('/internal/v1/events', this.options.baseUrl),
      { headers },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          this.#retry(new Error(`HTTP ${response.statusCode ?? 0}`));
          return;
        }
        response.setEncoding('utf8');
        let buffer = '';
        response.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            this.#frame(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        });
        response.on('error', (error) => this.#retry(error));
        response.on('end', () => this.#retry(new Error('stream ended')));
      },
    );
    request.on('error', (error) => this.#retry(error));
    this.#request = request;
  }

  #frame(frame: string): void {
    if (frame.startsWith(': ready')) this.#markReady();
    const data = frame
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
      .join('\n');
    if (!data) return;
    const event = JSON.parse(data) as MediaEvent;
    this.#lastSeq = event.seq;
    try {
      this.listener(event);
    } catch (error) {
      this.options.logger?.error({ err: error, type: event.type }, 'media event listener failed');
    }
  }

  #retry(error: Error): void {
    if (this.#closed || this.#timer) return;
    this.options.logger?.warn({ err: error }, 'media event stream dropped; reconnecting');
    this.#request?.destroy();
    try {
      this.options.onDrop?.();
    } catch (err) {
      this.options.logger?.error({ err }, 'media event stream drop listener failed');
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#closed) this.#connect();
    }, this.options.reconnectMs ?? 1_000);
  }
}
