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

/** Errors of the runtime itself, shared by every edge. */
export const unavailable = (code: string, message: string, cause?: unknown): AppError =>
  new AppError('unavailable', code, message, { cause });
