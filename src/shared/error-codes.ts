/**
 * Every error code of the runtime, the edges and the services, created once with its kind
 * and message (Fastify's `createError` style): code sites call `errors.X(…)` and never spell
 * a code or a message of their own. `%s` in a message is filled by the call's arguments in
 * order. A room kind's domain refusals live in its own table beside its decider (e.g.
 * src/voice-room/domain/errors.ts); docs/errors.md lists both (a test keeps it complete).
 */
import { format } from 'node:util';
import { INVALID_ARGUMENT } from '../domain/decider.js';
import { AppError, RateLimitedError, type ErrorKind } from './errors.js';

type Arg = string | number;

export interface ErrorCode {
  readonly code: string;
  readonly kind: ErrorKind;
  /** The message, with a `%s` per argument. */
  readonly template: string;
  (...args: readonly Arg[]): AppError;
  /** The same error, keeping what caused it (logged, never sent to a client). */
  withCause(cause: unknown, ...args: readonly Arg[]): AppError;
  /** A `rate_limited` error the caller may retry after `retryAfterMs`. */
  after(retryAfterMs: number, ...args: readonly Arg[]): RateLimitedError;
}

function defineErrors<const D extends Record<string, readonly [ErrorKind, string]>>(
  definitions: D,
): { readonly [K in keyof D]: ErrorCode } {
  const out: Record<string, ErrorCode> = {};
  for (const [code, [kind, template]] of Object.entries(definitions)) {
    const message = (args: readonly Arg[]) => (args.length ? format(template, ...args) : template);
    const make = (...args: readonly Arg[]) => new AppError(kind, code, message(args));
    out[code] = Object.assign(make, {
      code,
      kind,
      template,
      withCause: (cause: unknown, ...args: readonly Arg[]) =>
        new AppError(kind, code, message(args), { cause }),
      after: (retryAfterMs: number, ...args: readonly Arg[]) =>
        new RateLimitedError(code, message(args), retryAfterMs),
    });
  }
  return out as { readonly [K in keyof D]: ErrorCode };
}

export const errors = defineErrors({
  // The cell runtime: all retryable (`unavailable`) except bugs.
  CELL_FENCED: ['unavailable', 'room moved to another node, retry'],
  COMMIT_FAILED: ['unavailable', 'room commit failed, retry'],
  DEADLINE_EXCEEDED: ['unavailable', '%s'],
  NOT_OWNER_NODE: ['unavailable', 'forwarded call reached %s, not the owner'],
  OWNER_UNREACHABLE: ['unavailable', "the room's owner cannot be reached: %s"],
  /** A forwarded call's time ran out with no answer (the owner may be paused or overloaded). */
  OWNER_TIMEOUT: ['unavailable', "the room's owner did not answer in time: %s"],
  NODE_DRAINING: ['unavailable', 'node %s is draining'],
  /** A forwarding stream has the most calls running on the owner it may have. */
  NODE_BUSY: ['unavailable', 'the node is busy, retry: %s'],
  /** The SQL database cannot be reached or dropped the connection (driver detail: log only). */
  DATABASE_UNAVAILABLE: ['unavailable', 'the database is unavailable, retry'],
  /** A deadlock victim or a lock wait timeout: nothing was written. */
  DATABASE_LOCK_CONFLICT: ['unavailable', 'the database gave up on a lock conflict, retry'],
  ROOM_KIND_MISMATCH: ['conflict', 'room is a %s, not a %s'],
  UNKNOWN_KIND: ['internal', 'no room kind %s is registered'],
  LOG_GAP: ['internal', 'replay reached v%s, the room row says v%s'],
  DECIDE_FAILED: ['internal', 'the decider failed: %s'],
  INTERNAL: ['internal', 'internal error'],
  REPLY_MISMATCH: ['internal', 'the answer of %s does not match its declared reply: %s'],
  // Input.
  /** Defined with the domains, which refuse bad input with it too. */
  INVALID_ARGUMENT,
  INVALID_APP_CODE: ['validation', '参数错误: X-App-Code must be 1-64 of a-z, 0-9, _ or -'],
  VALIDATION: ['validation', '参数错误: %s'],
  BAD_REQUEST: ['validation', '参数错误: %s'],
  BALANCE_LIMIT: ['validation', 'a balance cannot pass %s'],
  REQUEST_ID_REUSED: ['conflict', 'request_id was used for another operation'],
  /** A REST path no route matches. */
  NO_ROUTE: ['not_found', 'not found'],
  // Who calls.
  UNAUTHENTICATED: ['unauthenticated', 'a valid cluster credential is required'],
  TOKEN_MISSING: ['unauthenticated', '未登录或登录已过期'],
  TOKEN_INVALID: ['unauthenticated', '未登录或登录已过期'],
  USER_NOT_FOUND: ['unauthenticated', '未登录或登录已过期'],
  INVALID_CREDENTIALS: ['unauthenticated', '用户名或密码错误'],
  BAD_ADMIN_TOKEN: ['unauthenticated', 'admin token required'],
  INTERNAL_TOKEN_INVALID: ['unauthenticated', 'invalid X-Internal-Token'],
  USERNAME_TAKEN: ['conflict', '用户名已存在'],
  // Limits on one caller.
  LOGIN_RATE_LIMITED: ['rate_limited', '登录失败次数过多，请 %s 秒后重试'],
  CREATE_RATE_LIMITED: ['rate_limited', '创建%s过于频繁，请 %s 秒后重试'],
  TOO_MANY_OPEN_ROOMS: ['conflict', '未关闭的%s已达上限（%s 个），请先关闭不再使用的%s'],
  /** A meeting user's invitees, or a meeting's invite tokens, passed their limit. */
  INVITE_RATE_LIMITED: ['rate_limited', '邀请过于频繁，请 %s 秒后重试'],
  CHAT_RATE_LIMITED: ['rate_limited', '发言过于频繁，请 %s 秒后重试'],
  /** Too many unknown meeting codes from one user or address: every code answers this. */
  MEETING_LOOKUP_RATE_LIMITED: ['rate_limited', '查询会议号失败次数过多，请 %s 秒后重试'],
  USER_LOOKUP_RATE_LIMITED: ['rate_limited', '查询用户过于频繁，请 %s 秒后重试'],
  /** Invitees must be users of the caller's app; nobody is invited otherwise. */
  INVITEE_NOT_FOUND: ['validation', '参数错误: invitee_ids: 用户不存在: %s'],
  BUSY: ['unavailable', '服务繁忙，请稍后重试'],
  RATE_LIMIT_UNAVAILABLE: ['unavailable', '服务暂不可用，请稍后重试'],
  /** The shared key-value store (Redis) failed: the meeting's password lockout cannot be checked. */
  KEY_VALUE_UNAVAILABLE: ['unavailable', '服务暂不可用，请稍后重试'],
  // WebSocket.
  APP_MISMATCH: ['forbidden', '无权访问其他应用的房间'],
  /**
   * `room.subscribe` of a room its kind does not let the caller follow (not present, not an
   * active participant): an ACK only. The voice room's own NOT_IN_ROOM names a user.
   */
  NOT_IN_ROOM_WS: ['forbidden', '你当前未在房间中'],
  TOO_MANY_ROOMS: ['illegal_state', '同时订阅的房间不能超过 %s 个'],
  REALTIME_UNAVAILABLE: ['unavailable', '实时服务暂不可用，请重试'],
  // Outbox administration.
  WEBHOOK_NOT_FOUND: ['not_found', '该应用未配置 webhook'],
  NOT_PENDING: ['illegal_state', '事件不存在或不处于待投递/待重试状态'],
  // Cell inspection (admin).
  CELL_NOT_FOUND: ['not_found', 'no room %s in app %s'],
  // The notification centre.
  NOTIFICATION_NOT_FOUND: ['not_found', '通知不存在'],
  TOO_MANY_RECIPIENTS: ['validation', '一次最多通知 %s 个用户'],
  // The media server, and the nodes' client of it (the seed's two kinds, with its messages).
  MEDIA_RESOURCE_NOT_FOUND: ['not_found', '会议资源不存在'],
  MEDIA_SERVER_ERROR: ['unavailable', '会议媒体服务暂不可用'],
  /** The media server has no FFmpeg: nothing can be recorded there. */
  RECORDING_UNAVAILABLE: ['illegal_state', '录制不可用：媒体服务器上没有 ffmpeg'],
  MEDIA_NO_WORKER: ['unavailable', 'no mediasoup worker is running'],
  MEDIA_WORKER_MISSING: ['unavailable', '%s'],
  MEDIA_BAD_PARAMETERS: ['validation', '%s'],
  /** The media server refused a call without naming why (its own codes pass through). */
  MEDIA_BAD_REQUEST: ['validation', '%s'],
  MEDIA_CONFLICT: ['conflict', '%s'],
  MEDIA_INVALID_STATE: ['conflict', '%s'],
  CANNOT_CONSUME: [
    'validation',
    'rtp_capabilities cannot consume producer %s (or it is on another router)',
  ],
  ROUTER_NOT_FOUND: ['not_found', 'router %s not found'],
  ROOM_ROUTER_NOT_FOUND: ['not_found', 'no router for room %s'],
  TRANSPORT_NOT_FOUND: ['not_found', 'transport %s not found'],
  PRODUCER_NOT_FOUND: ['not_found', 'producer %s not found'],
  CONSUMER_NOT_FOUND: ['not_found', 'consumer %s not found'],
  // The meeting's WebSocket signalling (src/meeting/signalling).
  /** The media server refused a call for another reason than the two above (the seed's text). */
  MEDIA_ORCHESTRATOR_ERROR: ['validation', 'mediaOrchestrator error: %s'],
  MEDIA_WRONG_DIRECTION: ['illegal_state', '%s 需要 %s 方向的 transport'],
  /** A user's transports, producers or consumers in one room are at their cap. */
  MEDIA_USER_LIMIT: [
    'conflict',
    '媒体资源已达上限：每人在一个房间最多 %s 个 %s，请先关闭不再使用的',
  ],
  /** What one socket made (in every room of a kind) is at its cap. */
  MEDIA_SOCKET_LIMIT: ['conflict', '媒体资源已达上限：每个连接最多 %s 个 %s，请先关闭不再使用的'],
  /** `….transport.plain.create` where the deployment keeps plain RTP off (the default). */
  MEDIA_PLAIN_RTP_OFF: ['forbidden', 'plain RTP transports are off here (ROOMS_MEDIA_PLAIN_RTP)'],
  MEETING_NOT_JOINED: ['illegal_state', '请先发送 meeting.room.join'],
  // The voice room's media signalling (src/voice-room/signalling).
  VOICE_MEDIA_NOT_JOINED: ['illegal_state', 'send room.subscribe for the room first'],
  VOICE_AUDIO_ONLY: ['validation', 'voice rooms carry audio only'],
  MEDIA_STATE_UNAVAILABLE: ['unavailable', '服务暂不可用，请稍后重试'],
});

/** Every code of {@link errors}, for docs/errors.md's table and its test. */
export const errorCatalog: readonly ErrorCode[] = Object.values(errors);

/** Every code of one kind: the outages (`unavailable`) and the bugs (`internal`) any call may meet. */
export function codesOfKind(kind: ErrorKind): readonly (keyof typeof errors)[] {
  return (Object.keys(errors) as (keyof typeof errors)[]).filter((n) => errors[n].kind === kind);
}
