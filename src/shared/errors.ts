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

/** Errors of the runtime itself, shared by every edge. */
export const unavailable = (code: string, message: string, cause?: unknown): AppError =>
  new AppError('unavailable', code, message, { cause });
