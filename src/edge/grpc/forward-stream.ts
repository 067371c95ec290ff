/**
 * `Forward`: the calls one node sends on to one owner, multiplexed on one long-lived gRPC
 * stream instead of a unary call each. A unary call costs an HTTP/2 stream, two header
 * blocks, a deadline and a trip through grpc-js' call stack on both nodes, which made a
 * forwarded call cost several times the call itself; on the stream a call is one small
 * message each way. Semantics are the unary call's:
 *
 * - each call carries its remaining time (as a unary call's grpc-timeout); the owner refuses
 *   a call already late when it arrives, the caller gives up when the time is out;
 * - an answer is the owner's reply, or its error with kind, reason code and message;
 * - the stream breaking (the owner died, the connection dropped) fails every call in flight
 *   on it as the owner unreachable (outcome unknown, as for a unary call cut off); the next
 *   call opens a new stream.
 */
import type { ClientDuplexStream, Metadata, ServerDuplexStream, ServiceError } from '@grpc/grpc-js';
import type { CallOptions } from '../voice/voice-api.js';
import { AppError } from '../../shared/errors.js';
import { errors } from '../../shared/error-codes.js';
import { deadlineExceeded, fromServiceError, isErrorKind } from './status.js';

export const FORWARD = 'Forward';

/** Most calls one stream may have running on the owner at once; more are refused, retryable. */
export const MAX_CALLS_IN_FLIGHT_PER_STREAM = 4_096;

export interface ForwardedCall {
  readonly id: number;
  readonly method: string;
  readonly body: string;
  readonly timeout_ms: number;
}

export interface ForwardedAnswer {
  readonly id: number;
  readonly body: string;
  readonly error_kind: string;
  readonly error_code: string;
  readonly error_message: string;
}

/** What the owner runs for one call: the unary handler's work, minus the transport. */
export type ForwardDispatch = (
  method: string,
  request: unknown,
  options: CallOptions,
) => Promise<unknown>;

/**
 * The owner's side: every call on a stream dispatched, answered by id when it settles.
 * `drain()` (the server closing) ends each stream once its calls in flight are answered, so
 * a graceful shutdown is not held open by the peers' long-lived streams.
 */
export function forwardStreams(dispatch: ForwardDispatch) {
  const open = new Set<() => void>();
  let draining = false;
  const handler = (stream: ServerDuplexStream<ForwardedCall, ForwardedAnswer>): void => {
    let inFlight = 0;
    let ended = false;
    /** The caller half-closed: no more calls come; answer those in flight, then end. */
    let closing = false;
    const end = () => {
      if (ended) return;
      ended = true;
      open.delete(endWhenIdle);
      stream.end();
    };
    const endWhenIdle = () => {
      if (inFlight === 0) end();
    };
    open.add(endWhenIdle);
    stream.on('data', (call: ForwardedCall) => {
      const id = Number(call.id);
      if (ended) return;
      if (inFlight >= MAX_CALLS_IN_FLIGHT_PER_STREAM) {
        const busy = errors.NODE_BUSY(`${MAX_CALLS_IN_FLIGHT_PER_STREAM} calls in flight`);
        stream.write({ ...failure(busy), id });
        return;
      }
      inFlight++;
      void run(dispatch, call).then((message) => {
        inFlight--;
        if (!ended) stream.write({ ...message, id });
        if (draining || closing) endWhenIdle();
      });
    });
    stream.on('end', () => {
      closing = true;
      endWhenIdle();
    });
    const gone = () => {
      ended = true;
      open.delete(endWhenIdle);
    };
    stream.on('error', gone);
    stream.on('cancelled', gone);
    if (draining) endWhenIdle();
  };
  return {
    handler,
    drain(): void {
      draining = true;
      for (const endWhenIdle of [...open]) endWhenIdle();
    },
  };
}

async function run(
  dispatch: ForwardDispatch,
  call: ForwardedCall,
): Promise<Omit<ForwardedAnswer, 'id'>> {
  try {
    // A call that is late on arrival never runs: its caller has given up already.
    if (call.timeout_ms <= 0) throw deadlineExceeded('the deadline passed before the call ran');
    let request: unknown;
    try {
      request = JSON.parse(call.body);
    } catch {
      throw errors.INVALID_ARGUMENT('body is not JSON');
    }
    const reply = await dispatch(call.method, request, {
      forwarded: true,
      deadlineMs: Date.now() + call.timeout_ms,
    });
    return {
      body: JSON.stringify(reply ?? null),
      error_kind: '',
      error_code: '',
      error_message: '',
    };
  } catch (error) {
    return failure(error);
  }
}

function failure(error: unknown): Omit<ForwardedAnswer, 'id'> {
  const app = error instanceof AppError ? error : errors.INTERNAL.withCause(error);
  return {
    body: '',
    error_kind: app.kind,
    error_code: app.code,
    error_message: app.message,
  };
}

interface Waiting {
  resolve(reply: unknown): void;
  reject(error: AppError): void;
  readonly timer: NodeJS.Timeout;
}

export type OpenStream = (metadata: Metadata) => ClientDuplexStream<ForwardedCall, ForwardedAnswer>;

/** The caller's side: one stream to one owner address, opened on first use. */
export class ForwardStream {
  #stream: ClientDuplexStream<ForwardedCall, ForwardedAnswer> | null = null;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 1;
  /** When the stream last brought an answer (performance.now()). */
  #heardAt = 0;

  constructor(
    private readonly addr: string,
    private readonly open: OpenStream,
    private readonly metadata: () => Metadata,
  ) {}

  /** Sends one call; answers the owner's reply, or rejects as a unary call would. */
  call(method: string, request: unknown, deadlineMs: number): Promise<unknown> {
    const timeoutMs = Math.floor(deadlineMs - Date.now());
    if (timeoutMs <= 0) {
      return Promise.reject(deadlineExceeded('the deadline passed before the call was forwarded'));
    }
    const id = this.#nextId++;
    const stream = this.#live();
    return new Promise((resolve, reject) => {
      const sentAt = performance.now();
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        // As a unary call's own deadline: no answer in time, the owner may be paused.
        reject(errors.OWNER_TIMEOUT(`no answer from ${this.addr} before the deadline`));
        // Nothing at all came back meanwhile: the connection may be dead without having
        // said so (a host gone, not a process). The next call starts a new stream.
        if (this.#heardAt < sentAt && this.#stream === stream) this.close();
      }, timeoutMs);
      this.#waiting.set(id, { resolve, reject, timer });
      stream.write({ id, method, body: JSON.stringify(request), timeout_ms: timeoutMs });
    });
  }

  /** Ends the stream; calls still in flight fail as unreachable. Idempotent. */
  close(): void {
    const stream = this.#stream;
    this.#stream = null;
    stream?.cancel();
    this.#failAll(unreachable(this.addr, 'the forwarding stream was closed'));
  }

  #live(): ClientDuplexStream<ForwardedCall, ForwardedAnswer> {
    if (this.#stream) return this.#stream;
    const stream = this.open(this.metadata());
    this.#stream = stream;
    stream.on('data', (answer: ForwardedAnswer) => this.#settle(answer));
    const broken = (error: AppError) => {
      if (this.#stream !== stream) return;
      this.#stream = null;
      this.#failAll(error);
    };
    // A refusal of the stream itself (a wrong cluster token) is passed on as it came; a
    // stream cut off means the owner is out of reach.
    stream.on('error', (error: ServiceError) => broken(streamError(this.addr, error)));
    stream.on('end', () => broken(unreachable(this.addr, 'the owner ended the forwarding stream')));
    stream.on('close', () => broken(unreachable(this.addr, 'the forwarding stream closed')));
    return stream;
  }

  #settle(answer: ForwardedAnswer): void {
    this.#heardAt = performance.now();
    const id = Number(answer.id);
    const waiting = this.#waiting.get(id);
    if (!waiting) return; // its caller gave up already
    this.#waiting.delete(id);
    clearTimeout(waiting.timer);
    if (!answer.error_code) {
      waiting.resolve(JSON.parse(answer.body) as unknown);
      return;
    }
    if (isErrorKind(answer.error_kind)) {
      waiting.reject(new AppError(answer.error_kind, answer.error_code, answer.error_message));
    } else {
      // Not our protocol: as a unary call's answer without a reason.
      waiting.reject(errors.OWNER_UNREACHABLE(`${this.addr} answered ${answer.error_code}`));
    }
  }

  #failAll(error: AppError): void {
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const w of waiting) {
      clearTimeout(w.timer);
      w.reject(error);
    }
  }
}

function unreachable(addr: string, reason: string): AppError {
  return errors.OWNER_UNREACHABLE(`${addr}: ${reason}`);
}

/** As a unary call's error: the owner's reason when it gave one, else out of reach. */
function streamError(addr: string, error: ServiceError): AppError {
  const app = fromServiceError(error);
  return app.code === 'OWNER_UNREACHABLE' ? unreachable(addr, error.message) : app;
}
