/**
 * The one error taxonomy of the project. Domain code and the runtime speak only in these
 * kinds; each protocol edge (REST, WebSocket, gRPC) maps them in exactly one place.
 */
export type ErrorKind =
  | 'unauthenticated'
  | 'validation'
  | 'not_found'
  | 'forbidden'
  | 'illegal_state'
  | 'conflict'
  | 'unavailable'
  | 'rate_limited'
  | 'internal';

/** A plain, serialisable error value: what a pure decider returns instead of events. */
export interface DomainError {
  readonly kind: ErrorKind;
  /** Stable machine-readable reason, e.g. `ROOM_CLOSED`. */
  readonly code: string;
  /** Human-readable text; the seed's exact message where it defines one. */
  readonly message: string;
}

/** Thrown form of {@link DomainError}, used across async boundaries. */
export class AppError extends Error implements DomainError {
  readonly kind: ErrorKind;
  readonly code: string;

  constructor(kind: ErrorKind, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.kind = kind;
    this.code = code;
  }

  static from(error: DomainError): AppError {
    return new AppError(error.kind, error.code, error.message);
  }
}

export function domainError(kind: ErrorKind, code: string, message: string): DomainError {
  return { kind, code, message };
}

export function isDomainError(value: unknown): value is DomainError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as DomainError).kind === 'string' &&
    typeof (value as DomainError).code === 'string' &&
    typeof (value as DomainError).message === 'string'
  );
}

/**
 * Too many requests of one caller (a rate limit or a lockout): try again after
 * `retryAfterMs`. REST answers 429 with `Retry-After`; gRPC RESOURCE_EXHAUSTED.
 */
export class RateLimitedError extends AppError {
  constructor(
    code: string,
    message: string,
    readonly retryAfterMs: number,
  ) {
    super('rate_limited', code, message);
    this.name = 'RateLimitedError';
  }

  /** Whole seconds, at least 1: what a `Retry-After` header carries. */
  get retryAfterS(): number {
    return Math.max(1, Math.ceil(this.retryAfterMs / 1000));
  }
}

/** Errors of the runtime itself, shared by every edge. */
export const unavailable = (code: string, message: string, cause?: unknown): AppError =>
  new AppError('unavailable', code, message, { cause });
