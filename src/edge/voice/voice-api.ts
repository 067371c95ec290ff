/**
 * The voice-room API, protocol-neutral: validates a request, turns it into a command or a
 * query, runs it on the owner (here, or forwarded once to the owner's advertise address)
 * and shapes the reply. The gRPC server and the REST routes both call it.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { findGift } from '../../adapters/sql/voice-room/catalog.js';
import { balanceOf } from '../../adapters/sql/voice-room/wallet.js';
import type { Database } from '../../adapters/sql/schema.js';
import type { CommandResult } from '../../cell/cell.js';
import type { CellHost, Routed } from '../../cell/host.js';
import type { CellKey } from '../../cell/lease.js';
import type { CellDomain } from '../../cell/domain.js';
import type { StoreTypes } from '../../cell/cell-store.js';
import { refuse } from '../../domain/voice-room/errors.js';
import { checkRoomAccess } from '../../domain/voice-room/guards.js';
import type {
  VoiceRoomCommand,
  VoiceRoomEvent,
  VoiceRoomState,
} from '../../domain/voice-room/types.js';
import { roomView } from '../../domain/voice-room/view.js';
import { AppError } from '../../shared/errors.js';
import { requests, type RequestOf, type RpcName } from './requests.js';

/** Sends a call to the owner node; the owner must not forward it again. */
export interface Forwarder {
  /** `deadlineMs` (epoch ms): the caller's deadline, kept on the forwarded call. */
  call(addr: string, method: RpcName, request: unknown, deadlineMs?: number): Promise<unknown>;
}

export interface CallOptions {
  /** The call came from another node: answer locally or refuse, never forward. */
  readonly forwarded?: boolean;
  /** Epoch ms after which the caller has given up (a gRPC deadline); forwarded with the call. */
  readonly deadlineMs?: number;
}

/** The id CreateRoom gives a room created without one: retries of one request land on one room. */
export function createdRoomIdOf(appCode: string, requestId: string): string {
  const digest = createHash('sha256').update(`${appCode}\n${requestId}`).digest('base64url');
  return `vr_${digest.slice(0, 16)}`;
}

/** Generic over the store's types only to pass the voice room's SQL hooks to the host. */
export class VoiceRoomApi<T extends StoreTypes = StoreTypes> {
  constructor(
    private readonly host: CellHost<T>,
    private readonly domain: CellDomain<VoiceRoomState, VoiceRoomCommand, VoiceRoomEvent, T>,
    private readonly forwarder: Forwarder,
    private readonly db: Kysely<Database>,
  ) {}

  /** Runs `method` with an untrusted request object. */
  async call(method: RpcName, raw: unknown, options: CallOptions = {}): Promise<unknown> {
    const req = parse(requests[method], raw);
    switch (method) {
      case 'GetRoom':
        return this.getRoom(req as RequestOf<'GetRoom'>, options);
      case 'CheckRoomAccess':
        return this.checkAccess(req as RequestOf<'CheckRoomAccess'>, options);
      case 'CreateRoom':
        return this.createRoom(req as RequestOf<'CreateRoom'>, options);
      case 'SendGift':
        return this.sendGift(req as RequestOf<'SendGift'>, options);
      default: {
        const r = req as { app_code: string; room_id: string; request_id?: string | undefined };
        const result = await this.run(method, r, toCommand(method, req), options);
        return isForwarded(result) ? result.reply : commandReply(method, result);
      }
    }
  }

  private async createRoom(req: RequestOf<'CreateRoom'>, options: CallOptions) {
    // Retries with one request id must land on one room: derive the id from it.
    const room_id = req.room_id ?? createdRoomIdOf(req.app_code, req.request_id ?? randomUUID());
    const full = { ...req, room_id };
    const result = await this.run(
      'CreateRoom',
      full,
      {
        type: 'CreateRoom',
        owner_user_id: req.owner_user_id,
        title: req.title,
        seat_count: req.seat_count,
      },
      options,
    );
    if (isForwarded(result)) return result.reply;
    return { room_id, room_version: result.version, duplicate: result.duplicate };
  }

  private async sendGift(req: RequestOf<'SendGift'>, options: CallOptions) {
    const gift = await findGift(this.db, req.app_code, req.gift_id);
    if (!gift?.active) throw AppError.from(refuse('GIFT_NOT_FOUND', req.gift_id));
    const result = await this.run(
      'SendGift',
      req,
      {
        type: 'SendGift',
        sender_user_id: req.sender_user_id,
        receiver_user_ids: req.receiver_user_ids,
        gift_id: req.gift_id,
        count: req.count,
        unit_price: gift.price,
      },
      options,
    );
    if (isForwarded(result)) return result.reply;
    const reply = result.reply as { total_price?: number };
    return {
      room_version: result.version,
      duplicate: result.duplicate,
      total_price: reply.total_price ?? 0,
      balance: await balanceOf(this.db, req.app_code, req.sender_user_id),
    };
  }

  private async getRoom(req: RequestOf<'GetRoom'>, options: CallOptions) {
    const routed = await this.host.query(
      this.domain,
      keyOf(req),
      (state, version) => (state.status === 'absent' ? null : roomView(state, version)),
      optionsOf(options),
    );
    if (routed.kind === 'remote') return this.forward(routed, 'GetRoom', req, options);
    if (!routed.value) throw AppError.from(refuse('ROOM_NOT_FOUND'));
    return { app_code: req.app_code, room_id: req.room_id, ...routed.value };
  }

  private async checkAccess(req: RequestOf<'CheckRoomAccess'>, options: CallOptions) {
    const routed = await this.host.query(
      this.domain,
      keyOf(req),
      (state) => checkRoomAccess(state, req.user_id, req.action),
      optionsOf(options),
    );
    if (routed.kind === 'remote') return this.forward(routed, 'CheckRoomAccess', req, options);
    const denied = routed.value;
    return denied
      ? { allowed: false, reason: denied.code, message: denied.message }
      : { allowed: true, reason: '', message: '' };
  }

  private async run(
    method: RpcName,
    req: { app_code: string; room_id: string; request_id?: string | undefined },
    command: VoiceRoomCommand,
    options: CallOptions,
  ): Promise<CommandResult | { forwarded: true; reply: unknown }> {
    const routed = await this.host.execute(this.domain, keyOf(req), command, {
      ...optionsOf(options),
      ...(req.request_id ? { requestId: req.request_id } : {}),
    });
    if (routed.kind === 'remote') {
      return { forwarded: true, reply: await this.forward(routed, method, req, options) };
    }
    return routed.value;
  }

  private forward(
    routed: Extract<Routed<unknown>, { kind: 'remote' }>,
    method: RpcName,
    req: unknown,
    options: CallOptions,
  ): Promise<unknown> {
    if (options.forwarded) {
      throw new AppError('unavailable', 'NOT_OWNER', 'forwarded call reached a non-owner');
    }
    return this.forwarder.call(routed.addr, method, req, options.deadlineMs);
  }
}

function isForwarded(
  r: CommandResult | { forwarded: true; reply: unknown },
): r is { forwarded: true; reply: unknown } {
  return 'forwarded' in r;
}

/** What the host needs of the call: not to forward it again, and when its caller gives up. */
function optionsOf(options: CallOptions) {
  return {
    ...(options.forwarded ? { forwarded: true } : {}),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  };
}

function keyOf(req: { app_code: string; room_id: string }): CellKey {
  return { appCode: req.app_code, roomId: req.room_id };
}

function parse<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new AppError(
    'validation',
    'INVALID_ARGUMENT',
    `${issue.path.join('.') || 'request'}: ${issue.message}`,
  );
}

function commandReply(method: RpcName, result: CommandResult): unknown {
  const base = { room_version: result.version, duplicate: result.duplicate };
  if (method === 'MicUp' || method === 'ChangeMicSeat' || method === 'ConfirmMicPublishing') {
    return { ...base, ...(result.reply as object) };
  }
  return base;
}

/** The command of every RPC that maps one to one. */
function toCommand(method: RpcName, req: unknown): VoiceRoomCommand {
  const as = <M extends RpcName>(_m: M) => req as RequestOf<M>;
  switch (method) {
    case 'CloseRoom':
      return { type: method, operator_user_id: as(method).operator_user_id };
    case 'JoinRoom':
    case 'LeaveRoom':
    case 'RoomHeartbeat':
      return { type: method, user_id: as(method).user_id };
    case 'KickUser':
    case 'UnbanUser': {
      const r = as(method);
      return { type: method, user_id: r.user_id, operator_user_id: r.operator_user_id };
    }
    case 'SetRoomAdmin': {
      const r = as(method);
      return {
        type: method,
        user_id: r.user_id,
        operator_user_id: r.operator_user_id,
        is_admin: r.is_admin,
      };
    }
    case 'SetMicSeatLock': {
      const r = as(method);
      return {
        type: method,
        seat_index: r.seat_index,
        locked: r.locked,
        operator_user_id: r.operator_user_id,
      };
    }
    case 'MicUp':
    case 'ChangeMicSeat': {
      const r = as(method);
      return { type: method, user_id: r.user_id, seat_index: r.seat_index };
    }
    case 'MicDown': {
      const r = as(method);
      return { type: method, user_id: r.user_id, operator_user_id: r.operator_user_id };
    }
    case 'ConfirmMicPublishing': {
      const r = as(method);
      return { type: method, user_id: r.user_id, mic_session_id: r.mic_session_id };
    }
    case 'RtcAudioStarted':
    case 'RtcAudioStopped':
    case 'RtcRoomExited': {
      const r = as(method);
      return {
        type: method,
        user_id: r.user_id,
        event_time_ms: r.event_time_ms,
        mic_session_id: r.mic_session_id,
      };
    }
    default:
      throw new Error(`${method} is not a plain command`);
  }
}
