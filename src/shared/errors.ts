/**
 * The one error taxonomy of the project. Domain code and the runtime speak only in these
 * kinds; each protocol edge (REST, WebSocket, gRPC) maps them in exactly one place.
 */
export { domainError, isDomainError, type DomainError, type ErrorKind } from '../domain/decider.js';
import type { DomainError, ErrorKind } from '../domain/decider.js';

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
