/**
 * Every refusal of the meeting: a stable reason code, a kind, and the seed's exact message
 * (meeting-api.md, 领域错误码映射). The kinds map to the seed's HTTP status through the
 * project's one mapping (validation and illegal_state → 400, forbidden → 403, not_found →
 * 404). Some reasons are only ever returned by the edge (the invite token, the password
 * lock, the room-code retries): they live here too, so REST and WebSocket answer with the
 * same code and text.
 */
import {
  domainError,
  invalidArgument as badInput,
  type DomainError,
  type ErrorKind,
} from '../../domain/decider.js';

const REASONS = {
  MEETING_NOT_FOUND: ['not_found', '会议不存在'],
  /** REST end / transfer-host / kick by someone other than the host. */
  HOST_ONLY: ['forbidden', '仅主持人可操作'],
  /**
   * WebSocket `meeting.member.state.changed` on another member by a non-host: the seed's
   * ACK text differs from REST's. A WebSocket ACK has no HTTP status; the kind is kept.
   */
  HOST_ONLY_WS: ['forbidden', '仅主持人可执行此操作'],
  MEETING_ENDED: ['illegal_state', '会议已结束'],
  MEETING_FULL: ['illegal_state', '会议已满员'],
  PASSWORD_REQUIRED: ['validation', '会议需要密码'],
  PASSWORD_WRONG: ['validation', '会议密码错误'],
  /** The seed answers 400 (not 429): 5 wrong attempts per (user, code) lock for 10 minutes. */
  PASSWORD_LOCKED: ['illegal_state', '密码尝试过多，请稍后再试'],
  NOT_IN_MEETING: ['illegal_state', '你当前未在会议中'],
  ALREADY_IN_MEETING: ['illegal_state', '你已在会议中'],
  IN_OTHER_MEETING: ['illegal_state', '你当前已在其他会议中'],
  /** Edge only: the invite token expired or is unknown. */
  INVITE_EXPIRED: ['illegal_state', '邀请链接已失效'],
  /**
   * The cell of the generated code already exists. The edge generates another code and
   * retries (5 times in all) before answering with this; the seed answers 400, not 409.
   */
  ROOM_CODE_CONFLICT: ['illegal_state', '会议号冲突，请重试'],
  CANNOT_KICK_SELF: ['validation', '不能踢自己'],
  CANNOT_TRANSFER_TO_SELF: ['validation', '不能将主持人转让给自己'],
  TARGET_NOT_ACTIVE: ['illegal_state', '目标用户不是当前活跃参会者'],
  /** Beyond the seed: the host locked the meeting; members already in stay. */
  MEETING_LOCKED: ['forbidden', '会议已锁定，暂不允许加入'],
  /** Beyond the seed: after the host's mute-all, only the host lets members unmute. */
  SELF_UNMUTE_BLOCKED: ['forbidden', '主持人已禁止自行解除静音'],
  /** Beyond the seed: one screen share at a time (the host may take it over). */
  SCREEN_SHARE_BUSY: ['illegal_state', '其他成员正在共享屏幕'],
  /** Beyond the seed: the host admits or denies someone who is not in the waiting room. */
  NOT_WAITING: ['not_found', '该用户不在等候室中'],
} as const satisfies Record<string, readonly [ErrorKind, string]>;

export type MeetingReason = keyof typeof REASONS;

/** The refusal for `reason`, with the seed's message exactly (no detail appended). */
export function refuse(reason: MeetingReason): DomainError {
  const [kind, message] = REASONS[reason];
  return domainError(kind, reason, message);
}

/**
 * INVALID_ARGUMENT (defined for every layer), for input the edge's schema should have refused
 * already, with which rule failed (a fixed text: never user input or a secret).
 */
export function invalidArgument(detail: string): DomainError {
  return badInput(`参数错误: ${detail}`);
}

/** Every refusal code of the meeting with its kind and message (for the edges and the docs). */
export const meetingReasons: readonly { code: MeetingReason; kind: ErrorKind; message: string }[] =
  Object.entries(REASONS).map(([code, [kind, message]]) => ({
    code: code as MeetingReason,
    kind,
    message,
  }));
