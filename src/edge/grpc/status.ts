/** The error taxonomy ⇄ gRPC status, in one place for server and client. */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { AppError, type ErrorKind } from '../../shared/errors.js';
import { errors } from '../../shared/error-codes.js';

export const REASON_KEY = 'x-rooms-reason';
export const FORWARDED_KEY = 'x-rooms-forwarded';

const TO_STATUS: Record<ErrorKind, status> = {
  validation: status.INVALID_ARGUMENT,
  not_found: status.NOT_FOUND,
  illegal_state: status.FAILED_PRECONDITION,
  forbidden: status.PERMISSION_DENIED,
  conflict: status.ALREADY_EXISTS,
  unauthenticated: status.UNAUTHENTICATED,
  unavailable: status.UNAVAILABLE,
  rate_limited: status.RESOURCE_EXHAUSTED,
  internal: status.INTERNAL,
};

/** A kind named on the wire (a forwarded call's answer) that this taxonomy knows. */
export function isErrorKind(kind: string): kind is ErrorKind {
  return Object.hasOwn(TO_STATUS, kind);
}

const TO_KIND = new Map<status, ErrorKind>(
  Object.entries(TO_STATUS).map(([kind, code]) => [code, kind as ErrorKind]),
);

/**
 * The reason of a call whose deadline passed before it ran or was forwarded: an `unavailable`
 * error for the other edges (retryable), DEADLINE_EXCEEDED on the wire.
 */
export const DEADLINE_REASON = 'DEADLINE_EXCEEDED';

export const deadlineExceeded = (message: string): AppError => errors.DEADLINE_EXCEEDED(message);

/** Server side: any thrown error → a gRPC error with the reason in trailing metadata. */
export function toServiceError(error: unknown): Partial<ServiceError> {
  const app = error instanceof AppError ? error : errors.INTERNAL.withCause(error);
  const metadata = new Metadata();
  metadata.set(REASON_KEY, app.code);
  const code = app.code === DEADLINE_REASON ? status.DEADLINE_EXCEEDED : TO_STATUS[app.kind];
  return { code, details: app.message, metadata };
}

/** Client side: a gRPC error from the owner → the same AppError, for every edge. */
export function fromServiceError(error: ServiceError): AppError {
  const reason = error.metadata?.get(REASON_KEY)[0];
  if (reason === DEADLINE_REASON) return deadlineExceeded(error.details);
  const kind = TO_KIND.get(error.code);
  if (kind && typeof reason === 'string') return new AppError(kind, reason, error.details);
  // No reason: the owner could not be reached or answered outside our protocol.
  return errors.OWNER_UNREACHABLE.withCause(error, error.details || error.message);
}
