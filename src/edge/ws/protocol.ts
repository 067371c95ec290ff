/**
 * The WebSocket protocol's fixed parts: close codes, client frames, ACKs. Every C→S event
 * gets `<event>.ack` with the same `seq`: `code` 0 and `data`, or `code` -1 and a
 * human-readable `message` (the seed's Chinese text) plus a stable `reason`.
 */
import { AppError, type DomainError } from '../../shared/errors.js';
import type { WsFrame } from '../../realtime/frames.js';
import { errors } from '../../shared/error-codes.js';

/** Close codes the hub sends (RFC 6455 range 4000-4999 is the application's). */
export const CLOSE = {
  /** Missing or invalid token (seed: the handshake is closed with 4001). */
  unauthorized: 4001,
  /** `connection_id` or `replaces` is not 8-64 letters, digits, `-` or `_` (or they are equal). */
  badConnectionId: 4400,
  /** A newer socket of the same user named this one in `replaces` (its reconnect). */
  replaced: 4409,
  /** The client does not read fast enough: its send buffer passed the limit. */
  slowConsumer: 4008,
  /** The client sent frames faster than its budget, or too many requests at once. */
  rateLimited: 4029,
  /** The node is shutting down: reconnect (to any node). */
  goingAway: 1001,
  /** The token could not be checked right now: reconnect later. */
  tryAgainLater: 1013,
} as const;

/** A parsed C→S frame. */
export interface ClientFrame {
  readonly event: string;
  readonly seq: number;
  readonly data: Readonly<Record<string, unknown>>;
}

/** Null for anything that is not `{event: string, seq?: number, data?: object}`. */
export function parseClientFrame(text: string): ClientFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const { event, seq, data } = value as Record<string, unknown>;
  if (typeof event !== 'string' || event.length === 0 || event.length > 64) return null;
  if (seq !== undefined && (typeof seq !== 'number' || !Number.isSafeInteger(seq))) return null;
  if (data !== undefined && (data === null || typeof data !== 'object' || Array.isArray(data))) {
    return null;
  }
  return { event, seq: seq ?? 0, data: (data ?? {}) as Record<string, unknown> };
}

/** The ACK of a C→S frame. */
export function ackFrame(
  request: ClientFrame,
  outcome:
    { readonly ok: true; readonly data: unknown } | { readonly ok: false; readonly error: unknown },
): string {
  const base = { event: `${request.event}.ack`, seq: request.seq, time: new Date().toISOString() };
  if (outcome.ok) {
    const frame: WsFrame = { ...base, data: outcome.data ?? {}, code: 0 };
    return JSON.stringify(frame);
  }
  const error = asDomainError(outcome.error);
  const frame: WsFrame & { reason: string } = {
    ...base,
    data: {},
    code: -1,
    message: error.message,
    reason: error.code,
  };
  return JSON.stringify(frame);
}

/** Errors of the hub itself, in the seed's style. */
export const wsErrors = {
  badRequest: (detail: string) => errors.BAD_REQUEST(detail),
  otherApp: () => errors.APP_MISMATCH(),
  notInRoom: () => errors.NOT_IN_ROOM_WS(),
  tooManyRooms: (limit: number) => errors.TOO_MANY_ROOMS(limit),
  unavailable: () => errors.REALTIME_UNAVAILABLE(),
};

function asDomainError(error: unknown): DomainError {
  if (error instanceof AppError) return error;
  return { kind: 'internal', code: 'INTERNAL', message: '服务器内部错误' };
}
