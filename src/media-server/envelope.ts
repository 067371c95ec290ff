/**
 * The media server's REST envelope: the project's wire format (the same as the rooms node's
 * REST edge, src/edge/http/envelope.ts), kept here so the media server depends on no part of
 * the node. Success: `{code: 0, message: 'success', data, trace_id, time}`; failure:
 * `{code: <HTTP status>, message, reason, trace_id, time}`, the status fixed by the error's
 * kind.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../shared/error-codes.js';
import { AppError, RateLimitedError, type ErrorKind } from '../shared/errors.js';

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

/** What a 500 says: the cause goes to the log only. */
const INTERNAL_MESSAGE = '服务器内部错误';

/** `2026-04-21 16:30:00` in local time, as the contract shows. */
function envelopeTime(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/** The caller's `X-Trace-Id` (up to 64 characters), else the request id. */
function traceIdOf(request: FastifyRequest): string {
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

function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  reason: string,
): FastifyReply {
  return reply.code(status).send({
    code: status,
    message,
    reason,
    trace_id: traceIdOf(request),
    time: envelopeTime(),
  });
}

function sendAppError(request: FastifyRequest, reply: FastifyReply, error: AppError) {
  if (error instanceof RateLimitedError) reply.header('retry-after', error.retryAfterS);
  return sendError(request, reply, STATUS[error.kind], error.message, error.code);
}

/**
 * Maps every error a route throws to the envelope: an AppError by its kind (its message and
 * code kept), Fastify's own refusals (schema, body parsing, size) to their 4xx with
 * `VALIDATION`, anything else to 500 with a generic message (the details go to the log).
 * A path no route matches is a 404 `NO_ROUTE`.
 */
export function installEnvelopeErrors(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof AppError) {
      if (error.kind === 'internal' || error.kind === 'unavailable') {
        request.log.warn({ err: error }, 'request failed');
      }
      return sendAppError(request, reply, error);
    }
    const e = error as { validation?: unknown; statusCode?: number; message?: string };
    if (e.validation || (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)) {
      const status = e.statusCode ?? 400;
      return sendError(request, reply, status, e.message ?? 'bad request', errors.VALIDATION.code);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(request, reply, 500, INTERNAL_MESSAGE, errors.INTERNAL.code);
  });
  app.setNotFoundHandler((request, reply) => sendAppError(request, reply, errors.NO_ROUTE()));
}
