/**
 * The REST API, typed from the node's OpenAPI document (./generated/, made by
 * @hey-api/openapi-ts): `call('joinMeeting', {path: {code}, body})` resolves with the
 * envelope's `data`, typed per operation, and rejects with an {@link ApiError} whose
 * `reason` is the union of the codes that operation documents. The bearer token is asked
 * for at each call (it may change: a new login).
 */
import { createClient, createConfig, type Client } from './generated/client/index.js';
import * as operations from './generated/sdk.gen.js';

type Operations = typeof operations;
/** Every operation of the API by its `operationId` (`createMeeting`, `micUp`, …). */
export type OperationId = keyof Operations;
type Result<K extends OperationId> = Awaited<ReturnType<Operations[K]>>;
/** What an operation takes: its `path`, `query`, `body`, `headers` (not the client). */
export type OptionsOf<K extends OperationId> = Omit<
  NonNullable<Parameters<Operations[K]>[0]>,
  'client' | 'throwOnError'
>;
/** The `data` of an operation's success envelope. */
export type ReplyOf<K extends OperationId> =
  NonNullable<Result<K>['data']> extends { data: infer D } ? D : never;
/** The `reason` codes an operation documents for its refusals. */
export type ReasonOf<K extends OperationId> =
  ErrorOf<Result<K>> extends infer E ? (E extends { reason?: infer R } ? R : never) : never;
/** The refusal of a result (each member of the union: success, or refusal). */
type ErrorOf<R> = R extends { error: infer E } ? NonNullable<E> : never;

/** Reasons of failures that never reached an answer of the server. */
export type TransportReason = 'NETWORK' | 'BAD_ANSWER';

/** A refused or failed call: the server's message, the HTTP status and the stable code. */
export class ApiError<R extends string = string> extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    /** The HTTP status; 0 when no answer arrived. */
    readonly status: number,
    /** The refusal's code (docs/errors.md), or why no answer could be read. */
    readonly reason: R | TransportReason | undefined,
    /** The answer's `trace_id`, for a report. */
    readonly traceId?: string,
  ) {
    super(message);
  }
}

export interface RestOptions {
  /** Where the node is: `https://rooms.example.com`; '' for the page's own origin. */
  readonly baseUrl: string;
  /** The bearer token to send, asked for at each call (absent or null: none). */
  readonly token?: () => string | null | undefined;
  /** Called when a call with a token is answered 401 (the token expired or was revoked). */
  readonly onUnauthorized?: () => void;
  /** Another fetch (tests, a proxy agent). */
  readonly fetch?: typeof fetch;
  /**
   * Sent as X-App-Code with every call: register and login read it (default `default`); the
   * other calls take the app from the token.
   */
  readonly appCode?: string;
}

interface ErrorEnvelope {
  code?: number;
  message?: string;
  reason?: string;
  trace_id?: string;
}

type AnyOperation = (options: Record<string, unknown>) => Promise<{
  data?: unknown;
  error?: unknown;
  response?: Response;
}>;

export class RestClient {
  /** The generated fetch client (interceptors, config) this API calls through. */
  readonly client: Client;

  constructor(private readonly options: RestOptions) {
    this.client = createClient(
      createConfig({
        baseUrl: options.baseUrl,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        auth: () => options.token?.() ?? undefined,
      }),
    );
  }

  /** Calls an operation by its operationId; resolves with its answer's `data`. */
  async call<K extends OperationId>(operation: K, ...args: ArgsOf<K>): Promise<ReplyOf<K>> {
    const run = operations[operation] as unknown as AnyOperation;
    const given = (args[0] ?? {}) as Record<string, unknown>;
    const headers = {
      ...(this.options.appCode ? { 'x-app-code': this.options.appCode } : {}),
      ...(given.headers as Record<string, string> | undefined),
    };
    let result: Awaited<ReturnType<AnyOperation>>;
    try {
      result = await run({ ...given, headers, client: this.client, throwOnError: false });
    } catch (cause) {
      throw new ApiError(errorText(cause), 0, 'NETWORK');
    }
    const status = result.response?.status ?? 0;
    if (result.error !== undefined || status >= 400 || status === 0) {
      const envelope = (result.error ?? {}) as ErrorEnvelope;
      if (status === 401 && this.options.token?.()) this.options.onUnauthorized?.();
      throw new ApiError<ReasonOf<K> & string>(
        envelope.message ?? `HTTP ${status}`,
        status,
        (envelope.reason as (ReasonOf<K> & string) | undefined) ??
          (status ? 'BAD_ANSWER' : 'NETWORK'),
        envelope.trace_id,
      );
    }
    const envelope = result.data as { code?: number; data?: unknown } | undefined;
    if (!envelope || envelope.code !== 0) {
      throw new ApiError(`unreadable answer (HTTP ${status})`, status, 'BAD_ANSWER');
    }
    return envelope.data as ReplyOf<K>;
  }
}

/** An operation's options, optional when it needs none (`getMe()`). */
type ArgsOf<K extends OperationId> =
  Parameters<Operations[K]> extends [options: unknown]
    ? [options: OptionsOf<K>]
    : [options?: OptionsOf<K>];

/**
 * A request id for a command, so that a retry applies once. Plain HTTP on another host than
 * localhost has no `crypto.randomUUID` (secure contexts only); `getRandomValues` works
 * everywhere.
 */
export function requestId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
