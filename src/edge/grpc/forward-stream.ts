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
 *
 * `ForwardBatched` carries the calls of one turn in one message (and the answers of one turn
 * back); an owner of an earlier version, without it, is called on `Forward`.
 */
import {
  status as GrpcStatus,
  type ClientDuplexStream,
  type Metadata,
  type ServerDuplexStream,
  type ServiceError,
} from '@grpc/grpc-js';
import type { CallOptions } from '../../voice-room/api/voice-api.js';
import { AppError } from '../../shared/errors.js';
import { errors } from '../../shared/error-codes.js';
import { deadlineExceeded, fromServiceError, isErrorKind } from './status.js';

export const FORWARD = 'Forward';
/** The same calls, a turn's calls in one message each way (the proto says why). */
export const FORWARD_BATCHED = 'ForwardBatched';

/** Most calls one stream may have running on the owner at once; more are refused, retryable. */
export const MAX_CALLS_IN_FLIGHT_PER_STREAM = 4_096;

/**
 * A batch's message is sent once its bodies pass this, whatever is still to come in the
 * turn: well under grpc-js' 4 MiB limit on a received message, which would fail the stream.
 */
export const MAX_BATCH_BODY_BYTES = 1024 * 1024;

export interface ForwardedCall {
  readonly id: number;
  readonly method: string;
  readonly body: string;
  readonly timeout_ms: number;
  /** A gateway's call: the receiving node may forward it once more (the proto says why). */
  readonly gateway?: boolean;
}

export interface ForwardedAnswer {
  readonly id: number;
  readonly body: string;
  readonly error_kind: string;
  readonly error_code: string;
  readonly error_message: string;
}

export interface ForwardedCalls {
  readonly calls: readonly ForwardedCall[];
}

export interface ForwardedAnswers {
  readonly answers: readonly ForwardedAnswer[];
}

/** What the owner runs for one call: the unary handler's work, minus the transport. */
export type ForwardDispatch = (
  method: string,
  request: unknown,
  options: CallOptions,
) => Promise<unknown>;

/**
 * Messages of one turn of the event loop, sent together from `setImmediate` (after the turn's
 * I/O callbacks, where Node's HTTP/2 session would write them anyway), or at once when their
 * bodies pass MAX_BATCH_BODY_BYTES.
 */
class TurnBatch<T extends { readonly body: string }> {
  #items: T[] = [];
  #bytes = 0;

  constructor(private readonly send: (items: T[]) => void) {}

  push(item: T): void {
    this.#items.push(item);
    this.#bytes += item.body.length;
    if (this.#bytes >= MAX_BATCH_BODY_BYTES) this.flush();
    else if (this.#items.length === 1) setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.#items.length === 0) return;
    const items = this.#items;
    this.#items = [];
    this.#bytes = 0;
    this.send(items);
  }
}

/** How one stream's messages carry calls in and answers out. */
interface Framing<In, Out> {
  callsOf(message: In): readonly ForwardedCall[];
  /** Sends one answer, or queues it for the turn's message (sent by `flush`). */
  answerer(stream: ServerDuplexStream<In, Out>, open: () => boolean): AnswerSink;
}

interface AnswerSink {
  send(answer: ForwardedAnswer): void;
  flush(): void;
}

const oneByOne: Framing<ForwardedCall, ForwardedAnswer> = {
  callsOf: (call) => [call],
  answerer: (stream) => ({ send: (answer) => stream.write(answer), flush: () => undefined }),
};

const batched: Framing<ForwardedCalls, ForwardedAnswers> = {
  callsOf: (message) => message.calls ?? [],
  answerer: (stream, open) => {
    const batch = new TurnBatch<ForwardedAnswer>((answers) => {
      if (open()) stream.write({ answers });
    });
    return { send: (answer) => batch.push(answer), flush: () => batch.flush() };
  },
};

/**
 * The owner's side: every call on a stream dispatched, answered by id when it settles.
 * `drain()` (the server closing) ends each stream once its calls in flight are answered, so
 * a graceful shutdown is not held open by the peers' long-lived streams.
 */
export function forwardStreams(dispatch: ForwardDispatch) {
  const open = new Set<() => void>();
  let draining = false;
  const serve = <In, Out>(stream: ServerDuplexStream<In, Out>, framing: Framing<In, Out>) => {
    let inFlight = 0;
    let ended = false;
    /** The caller half-closed: no more calls come; answer those in flight, then end. */
    let closing = false;
    const answers = framing.answerer(stream, () => !ended);
    const end = () => {
      if (ended) return;
      answers.flush();
      ended = true;
      open.delete(endWhenIdle);
      stream.end();
    };
    const endWhenIdle = () => {
      if (inFlight === 0) end();
    };
    open.add(endWhenIdle);
    const accept = (call: ForwardedCall) => {
      const id = Number(call.id);
      if (ended) return;
      if (inFlight >= MAX_CALLS_IN_FLIGHT_PER_STREAM) {
        const busy = errors.NODE_BUSY(`${MAX_CALLS_IN_FLIGHT_PER_STREAM} calls in flight`);
        answers.send({ ...failure(busy), id });
        return;
      }
      inFlight++;
      void run(dispatch, call).then((message) => {
        inFlight--;
        if (!ended) answers.send({ ...message, id });
        if (draining || closing) endWhenIdle();
      });
    };
    stream.on('data', (message: In) => {
      for (const call of framing.callsOf(message)) accept(call);
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
    handler: (stream: ServerDuplexStream<ForwardedCall, ForwardedAnswer>) =>
      serve(stream, oneByOne),
    batchedHandler: (stream: ServerDuplexStream<ForwardedCalls, ForwardedAnswers>) =>
      serve(stream, batched),
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
      forwarded: call.gateway !== true,
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
  readonly call: Omit<ForwardedCall, 'timeout_ms'>;
  readonly deadlineMs: number;
}

export type OpenStream = (
  method: typeof FORWARD | typeof FORWARD_BATCHED,
  metadata: Metadata,
) => ClientDuplexStream<unknown, unknown>;

/** One open stream and how a call goes on it. */
interface Live {
  readonly stream: ClientDuplexStream<unknown, unknown>;
  send(call: ForwardedCall): void;
}

/** The caller's side: one stream to one owner address, opened on first use. */
export class ForwardStream {
  #live: Live | null = null;
  /** Until the owner answers that it has no ForwardBatched (an earlier version), per stream. */
  #batched = true;
  readonly #waiting = new Map<number, Waiting>();
  #nextId = 1;
  /** When the stream last brought an answer (performance.now()). */
  #heardAt = 0;

  constructor(
    private readonly addr: string,
    private readonly open: OpenStream,
    private readonly metadata: () => Metadata,
    /** An edge node's stream: its calls are a gateway's, not forwarded ones. */
    private readonly gateway = false,
  ) {}

  /** Sends one call; answers the owner's reply, or rejects as a unary call would. */
  call(method: string, request: unknown, deadlineMs: number): Promise<unknown> {
    if (deadlineMs - Date.now() < 1) {
      return Promise.reject(deadlineExceeded('the deadline passed before the call was forwarded'));
    }
    const call = {
      id: this.#nextId++,
      method,
      body: JSON.stringify(request),
      ...(this.gateway ? { gateway: true } : {}),
    };
    const live = this.#open();
    return new Promise((resolve, reject) => {
      const sentAt = performance.now();
      const timer = setTimeout(() => {
        this.#waiting.delete(call.id);
        // As a unary call's own deadline: no answer in time, the owner may be paused.
        reject(errors.OWNER_TIMEOUT(`no answer from ${this.addr} before the deadline`));
        // Nothing at all came back meanwhile: the connection may be dead without having
        // said so (a host gone, not a process). The next call starts a new stream.
        if (this.#heardAt < sentAt && this.#live === live) this.close();
      }, deadlineMs - Date.now());
      this.#waiting.set(call.id, { resolve, reject, timer, call, deadlineMs });
      live.send(withTimeout(call, deadlineMs));
    });
  }

  /** Ends the stream; calls still in flight fail as unreachable. Idempotent. */
  close(): void {
    const live = this.#live;
    this.#live = null;
    live?.stream.cancel();
    this.#failAll(unreachable(this.addr, 'the forwarding stream was closed'));
  }

  #open(): Live {
    if (this.#live) return this.#live;
    const batched = this.#batched;
    const stream = this.open(batched ? FORWARD_BATCHED : FORWARD, this.metadata());
    const live: Live = batched
      ? batchedSender(stream, () => this.#live === live)
      : { stream, send: (call) => stream.write(call) };
    this.#live = live;
    stream.on('data', (message: ForwardedAnswer | ForwardedAnswers) => {
      this.#heardAt = performance.now();
      if (!batched) this.#settle(message as ForwardedAnswer);
      else for (const answer of (message as ForwardedAnswers).answers ?? []) this.#settle(answer);
    });
    const broken = (error: AppError) => {
      if (this.#live !== live) return;
      this.#live = null;
      // The owner may come back upgraded (a rolling upgrade restarts it): the next stream
      // asks for ForwardBatched again.
      this.#batched = true;
      this.#failAll(error);
    };
    // A refusal of the stream itself (a wrong cluster token) is passed on as it came; a
    // stream cut off means the owner is out of reach.
    stream.on('error', (error: ServiceError) => {
      if (batched && error.code === GrpcStatus.UNIMPLEMENTED && this.#live === live) {
        this.#olderOwner();
        return;
      }
      broken(streamError(this.addr, error));
    });
    stream.on('end', () => broken(unreachable(this.addr, 'the owner ended the forwarding stream')));
    stream.on('close', () => broken(unreachable(this.addr, 'the forwarding stream closed')));
    return live;
  }

  /**
   * The owner has no ForwardBatched: no call of that stream ran (the method itself was
   * refused), so each waiting call is sent again, on Forward, with the time it has left.
   */
  #olderOwner(): void {
    this.#batched = false;
    this.#live = null;
    const live = this.#open();
    for (const waiting of this.#waiting.values()) {
      live.send(withTimeout(waiting.call, waiting.deadlineMs));
    }
  }

  #settle(answer: ForwardedAnswer): void {
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

/** A turn's calls in one message, while the stream is still the one in use. */
function batchedSender(stream: ClientDuplexStream<unknown, unknown>, current: () => boolean): Live {
  const batch = new TurnBatch<ForwardedCall>((calls) => {
    if (current()) stream.write({ calls });
  });
  return { stream, send: (call) => batch.push(call) };
}

/** The call with the milliseconds left to its deadline; 0, late already: the owner refuses it. */
function withTimeout(call: Omit<ForwardedCall, 'timeout_ms'>, deadlineMs: number): ForwardedCall {
  return { ...call, timeout_ms: Math.max(0, Math.floor(deadlineMs - Date.now())) };
}

function unreachable(addr: string, reason: string): AppError {
  return errors.OWNER_UNREACHABLE(`${addr}: ${reason}`);
}

/** As a unary call's error: the owner's reason when it gave one, else out of reach. */
function streamError(addr: string, error: ServiceError): AppError {
  const app = fromServiceError(error);
  return app.code === 'OWNER_UNREACHABLE' ? unreachable(addr, error.message) : app;
}
