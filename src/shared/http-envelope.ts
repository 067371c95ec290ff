/**
 * The REST response envelope of the contract, `{code, message, data, trace_id, time}`, and
 * the one place where the error taxonomy becomes HTTP. `code` equals the HTTP status on
 * failure and is 0 on success. Shared by the rooms node's REST edge and the media server,
 * which speak the same wire format and depend on nothing of each other.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, RateLimitedError, type ErrorKind } from './errors.js';
import { errors } from './error-codes.js';

const STATUS: Record<ErrorKind, number> = {
  unauthenticated: 401,
  validation: 400,
  illegal_state: 400,
  not_found: 404,
  forbidden: 403,
  conflict: 409,
  unavailable: 503,
  rate_limited: 429,
  internal: 500,
};

export function httpStatusOf(kind: ErrorKind): number {
  return STATUS[kind];
}

/** `2026-04-21 16:30:00` in local time, as the contract shows. */
export function envelopeTime(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

export function traceIdOf(request: FastifyRequest): string {
  const header = request.headers['x-trace-id'];
  return typeof header === 'string' && header.length > 0 && header.length <= 64
    ? header
    : request.id;
}

export function sendOk(
  request: FastifyRequest,
  reply: FastifyReply,
  data: unknown,
  status = 200,
): FastifyReply {
  return reply.code(status).send({
    code: 0,
    message: 'success',
    data,
    trace_id: traceIdOf(request),
    time: envelopeTime(),
  });
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  reason?: string,
): FastifyReply {
  return reply.code(status).send({
    code: status,
    message,
    ...(reason ? { reason } : {}),
    trace_id: traceIdOf(request),
    time: envelopeTime(),
  });
}

/**
 * Maps every error thrown by a route to the envelope: AppError by its kind (message kept:
 * the seed's text where it has one), Fastify's schema errors to 400, the rest to 500 with a
 * generic message (the details go to the log only).
 */
export function installEnvelopeErrors(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof AppError) {
      if (error.kind === 'internal' || error.kind === 'unavailable') {
        request.log.warn({ err: error }, 'request failed');
      }
      if (error instanceof RateLimitedError) reply.header('retry-after', error.retryAfterS);
      return sendError(request, reply, httpStatusOf(error.kind), error.message, error.code);
    }
    const e = error as { validation?: unknown; statusCode?: number; message?: string };
    if (e.validation || (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)) {
      return sendError(
        request,
        reply,
        e.statusCode ?? 400,
        e.message ?? 'bad request',
        errors.VALIDATION.code,
      );
    }
    request.log.error({ err: error }, 'unhandled error');
    // The client sees a fixed text; what went wrong stays in the log.
    return sendError(request, reply, 500, '服务器内部错误', errors.INTERNAL.code);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, 404, errors.NO_ROUTE().message, errors.NO_ROUTE.code),
  );
}
