/**
 * The HTTP webhook sink: POSTs the stored envelope as the raw body, signed with the app's
 * secret, with a timeout. 2xx = delivered; 4xx other than 408/429 = failed (the request
 * itself is wrong: retrying cannot help); anything else (3xx, 408, 429, 5xx, network
 * error, timeout) = retryable: the outcome is unknown or the consumer asked us to wait.
 */
import http from 'node:http';
import https from 'node:https';
import type { DeliveryOutcome, SinkResolver } from './relay.js';
import { signWebhookBody } from './signature.js';
import type { WebhookDirectory } from './webhooks.js';

/** Where and how to sign. */
export interface WebhookTarget {
  readonly url: string;
  readonly secret: string;
}

/** What is sent. */
export interface WebhookEvent {
  readonly eventId: string;
  /** The envelope JSON exactly as stored: also the bytes signed. */
  readonly envelope: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
}

export interface WebhookSinkOptions {
  readonly timeoutMs: number;
  /** Concurrent connections per webhook origin. */
  readonly maxSockets?: number;
}

/** The outcome class of an HTTP status. */
export function classifyStatus(status: number): DeliveryOutcome['kind'] {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'failed';
  return 'retryable';
}

const SNIPPET_CHARS = 200;

export class WebhookSink {
  // Keep-alive: a relay sends many small requests to few origins.
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly options: WebhookSinkOptions) {
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64 };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  }

  /** Sends one event; never throws. */
  deliver(target: WebhookTarget, event: WebhookEvent): Promise<DeliveryOutcome> {
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      return Promise.resolve({ kind: 'failed', error: 'invalid webhook URL' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return Promise.resolve({ kind: 'failed', error: `unsupported scheme ${url.protocol}` });
    }
    const body = Buffer.from(event.envelope, 'utf8');
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      let settled = false;
      const done = (outcome: DeliveryOutcome): void => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      const request = client.request(
        url,
        {
          method: 'POST',
          agent: url.protocol === 'https:' ? this.agents.https : this.agents.http,
          signal: AbortSignal.timeout(this.options.timeoutMs),
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            'user-agent': 'echochat-rooms-webhook/1',
            'x-rooms-signature': signWebhookBody(target.secret, body),
            'x-rooms-event-id': event.eventId,
            'x-rooms-attempt': String(event.attempt),
          },
        },
        (response) => {
          const status = response.statusCode ?? 0;
          let snippet = '';
          response.setEncoding('utf8');
          // Read to the end (keeps the connection reusable), remembering the start.
          response.on('data', (chunk: string) => {
            if (snippet.length < SNIPPET_CHARS) snippet += chunk;
          });
          response.on('end', () => {
            const kind = classifyStatus(status);
            if (kind === 'delivered') done({ kind, status });
            else done({ kind, error: `HTTP ${status}${describeBody(snippet)}` });
          });
          response.on('error', (error) => done({ kind: 'retryable', error: describe(error) }));
          response.on('close', () => {
            if (!response.complete) done({ kind: 'retryable', error: 'response cut short' });
          });
        },
      );
      request.on('error', (error) => {
        const timedOut = error.name === 'AbortError' || error.name === 'TimeoutError';
        done({
          kind: 'retryable',
          error: timedOut ? `timeout after ${this.options.timeoutMs} ms` : describe(error),
        });
      });
      request.end(body);
    });
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function describeBody(snippet: string): string {
  const text = snippet.replace(/\s+/g, ' ').trim().slice(0, SNIPPET_CHARS);
  return text ? `: ${text}` : '';
}

function describe(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}

/** Each app's events go to its webhook; an app without one has no sink. */
export function webhookSinks(directory: WebhookDirectory, sink: WebhookSink): SinkResolver {
  return async (appCode) => {
    const target = await directory.get(appCode);
    if (!target) return null;
    return {
      deliver: (event, attempt) =>
        sink.deliver(target, { eventId: event.eventId, envelope: event.envelope, attempt }),
    };
  };
}
