/**
 * The voice-room API, protocol-neutral: the one call path of every room kind
 * (../../edge/room-call.ts) over the RPCs ./commands.ts declares, each answer checked against
 * its declared reply. The gRPC server and the REST routes both call it.
 */
import type { CellHost } from '../../cell/host.js';
import type { CellKey } from '../../cell/lease.js';
import type { CellsTier } from '../../cell/cells-tier.js';
import { requestFingerprint } from '../../cell/request-fingerprint.js';
import type { CellDomain } from '../../cell/domain.js';
import type { StoreTypes } from '../../cell/cell-store.js';
import type { VoiceRoomCommand, VoiceRoomEvent, VoiceRoomState } from '../domain/types.js';
import { declarationOf, replySchemaOf, type ReplyOf, type RpcName } from './commands.js';
import type { CallContext, RoomRequest } from './declaration.js';
import { declaredReply } from '../../edge/declared-reply.js';
import { OwnerElsewhere } from '../../edge/owner-forward.js';
import {
  answerCall,
  hostOptions,
  type RoomCallOptions,
  type RoomCalls,
} from '../../edge/room-call.js';
import type { VoiceRoomStore } from './voice-store.js';
import type { ChatAllowance } from './chat-allowance.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';

/** Sends a call to the owner node; the owner must not forward it again. */
export interface Forwarder {
  /** `deadlineMs` (epoch ms): the caller's deadline, kept on the forwarded call. */
  call(addr: string, method: RpcName, request: unknown, deadlineMs?: number): Promise<unknown>;
}

export type CallOptions = RoomCallOptions;

/** Generic over the store's types only to pass the voice room's SQL hooks to the host. */
export class VoiceRoomApi<T extends StoreTypes = StoreTypes> {
  readonly #calls: RoomCalls<RpcName>;

  constructor(
    private readonly host: CellHost<T>,
    private readonly domain: CellDomain<VoiceRoomState, VoiceRoomCommand, VoiceRoomEvent, T>,
    forwarder: Forwarder,
    private readonly store: VoiceRoomStore,
    /** On a node without the cells role: every call goes whole to a cells node there. */
    cellsTier: CellsTier | null = null,
    /** Where new rooms' routers go; null: a node without media (nothing recorded). */
    private readonly media: Pick<MediaServers, 'place'> | null,
    private readonly chat: ChatAllowance,
    private readonly clock: Clock = systemClock,
  ) {
    this.#calls = {
      host,
      cellsTier,
      requestOf: (method) => declarationOf(method).schema,
      roomOf: (_method, req) => {
        const named = req as Partial<RoomRequest>;
        return named.room_id ? keyOf(named as RoomRequest) : null;
      },
      run: (method, req, options) => this.#run(method, req, options),
      // The owner gets the request as parsed here (a proto message would coerce "1" to 1).
      send: (addr, method, req, _raw, deadlineMs) => forwarder.call(addr, method, req, deadlineMs),
      // Every voice-room command carries a request id (REST makes one up, gRPC demands one).
      unkeyed: () => false,
    };
  }

  /** Runs `method` with an untrusted request object; answers its declared reply. */
  async call<M extends RpcName>(
    method: M,
    raw: unknown,
    options: CallOptions = {},
  ): Promise<ReplyOf<M>> {
    const answer = await answerCall(this.#calls, method, raw, options);
    return declaredReply(replySchemaOf(method), method, answer);
  }

  /** Runs `method` here as declared: its handler, or the plain command it builds. */
  #run(method: RpcName, req: unknown, options: CallOptions): Promise<unknown> {
    const declared = declarationOf(method);
    const ctx = this.#contextOf(options);
    if ('handle' in declared) return declared.handle(ctx, req);
    return ctx.execute(req as RoomRequest, declared.toCommand(req), (result) =>
      declared.answer(result),
    );
  }

  /** What a declaration's handler may do in this call. */
  #contextOf(options: CallOptions): CallContext {
    return {
      store: this.store,
      chat: this.chat,
      nowMs: () => this.clock.nowMs(),
      placeMedia: () => this.media?.place() ?? null,
      execute: async (req, command, shape) => {
        const key = keyOf(req);
        const routed = await this.host.execute(this.domain, key, command, {
          ...hostOptions(options),
          ...(req.request_id
            ? { requestId: req.request_id, fingerprint: requestFingerprint(command.type, req) }
            : {}),
        });
        if (routed.kind === 'remote') throw new OwnerElsewhere(routed, key);
        return shape(routed.value);
      },
      query: async (req, read, shape) => {
        const key = keyOf(req);
        const routed = await this.host.query(this.domain, key, read, hostOptions(options));
        if (routed.kind === 'remote') throw new OwnerElsewhere(routed, key);
        return shape(routed.value);
      },
    };
  }
}

function keyOf(req: RoomRequest): CellKey {
  return { appCode: req.app_code, roomId: req.room_id };
}
