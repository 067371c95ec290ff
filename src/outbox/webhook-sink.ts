/**
 * The HTTP webhook sink: POSTs the stored envelope as the raw body, signed with the app's
 * secret, with a timeout. 2xx = delivered; 4xx other than 408/429 = failed (the request
 * itself is wrong: retrying cannot help); anything else (3xx, 408, 429, 5xx, network
 * error, timeout) = retryable: the outcome is unknown or the consumer asked us to wait.
 *
 * A destination the {@link DestinationPolicy} refuses (loopback, private, link-local, …
 * unless allow-listed) is `failed` before any connection is made: sending the same
 * request again cannot help until an operator changes the webhook or the allow-list (and
 * re-queues). `last_error` records the status code and its standard reason phrase, never
 * the consumer's answer body: whoever sets a webhook must not read other hosts' answers
 * through the admin API.
 */
import http, { STATUS_CODES } from 'node:http';
import https from 'node:https';
import { DestinationPolicy, DestinationRefusedError, REFUSED_CODE } from './destinations.js';
import type { ClaimedEvent } from './outbox-store.js';
import type { DeliveryOutcome, EventSink, SinkResolver } from './relay.js';
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
  /** Which addresses may be reached; default: only globally routable ones. */
  readonly destinations?: DestinationPolicy;
}

/** The outcome class of an HTTP status. */
export function classifyStatus(status: number): DeliveryOutcome['kind'] {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'failed';
  return 'retryable';
}

export class WebhookSink {
  // Keep-alive: a relay sends many small requests to few origins.
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly destinations: DestinationPolicy;

  constructor(private readonly options: WebhookSinkOptions) {
    this.destinations = options.destinations ?? new DestinationPolicy();
    // Every new connection resolves its host through the policy and connects to a checked
    // address; a kept-alive socket was checked when it connected.
    const agentOptions = {
      keepAlive: true,
      maxSockets: options.maxSockets ?? 64,
      lookup: this.destinations.lookup,
    };
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
    // An IP literal is connected to without a lookup: check it here.
    const refused = this.destinations.refuseLiteral(url);
    if (refused) return Promise.resolve({ kind: 'failed', error: refused });
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
          // Read to the end (keeps the connection reusable); the body is never kept.
          response.resume();
          response.on('end', () => {
            const kind = classifyStatus(status);
            if (kind === 'delivered') done({ kind, status });
            else done({ kind, error: describeStatus(status) });
          });
          response.on('error', (error) => done({ kind: 'retryable', error: describe(error) }));
          response.on('close', () => {
            if (!response.complete) done({ kind: 'retryable', error: 'response cut short' });
          });
        },
      );
      request.on('error', (error) => {
        if (error instanceof DestinationRefusedError || hasCode(error, REFUSED_CODE)) {
          done({ kind: 'failed', error: error.message });
          return;
        }
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

/** `HTTP 503 Service Unavailable`: the code and its standard phrase, nothing the peer wrote. */
function describeStatus(status: number): string {
  const phrase = STATUS_CODES[status];
  return phrase ? `HTTP ${status} ${phrase}` : `HTTP ${status}`;
}

function hasCode(error: Error, code: string): boolean {
  return (error as { code?: unknown }).code === code;
}

/** A network error by its code (`ECONNREFUSED`, `CERT_HAS_EXPIRED`, …). */
function describe(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.message.slice(0, 200);
}

/**
 * Each app's events go to its webhook; an app without one has no sink. The directory is
 * read for every claimed batch (one query for the batch's apps), never cached: a webhook
 * set or removed on any node applies to every event claimed after that change committed.
 */
export function webhookSinks(directory: WebhookDirectory, sink: WebhookSink): SinkResolver {
  return async (appCodes) => {
    const targets = await directory.getMany(appCodes);
    const sinks = new Map<string, EventSink | null>();
    for (const appCode of appCodes) {
      const target = targets.get(appCode);
      sinks.set(
        appCode,
        target
          ? {
              deliver: (event, attempt) =>
                sink.deliver(target, { eventId: event.eventId, envelope: event.envelope, attempt }),
              ...(target.crowdEvents ? {} : { refuses: refuseCrowdEvents }),
            }
          : null,
      );
    }
    return sinks;
  };
}

/** `last_error` of a crowd event an app's webhook does not take. */
export const NO_CROWD_EVENTS_REASON = 'the webhook takes no crowd joins and leaves';

/** A webhook set with `crowd_events: false` skips the voice crowd's joins and leaves. */
function refuseCrowdEvents(event: ClaimedEvent): string | null {
  const { data } = JSON.parse(event.envelope) as { data?: { in_crowd?: unknown } };
  return data?.in_crowd === true ? NO_CROWD_EVENTS_REASON : null;
}
