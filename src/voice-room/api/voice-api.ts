/**
 * The voice-room API, protocol-neutral: validates a request with its RPC's schema, runs the
 * RPC as ./commands.ts declares it on the owner (here, or forwarded once to the owner's
 * advertise address) and shapes the reply. The gRPC server and the REST routes both call it.
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
import { errors } from '../../shared/error-codes.js';
import { parseInput } from '../../shared/parse-input.js';
import { OwnerElsewhere, toOwner, type RemoteRoute } from '../../edge/owner-forward.js';
import type { VoiceRoomStore } from './voice-store.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';

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
  /** This call already ran once on a remembered route that proved stale (../owner-forward.ts). */
  readonly rerouted?: boolean;
}

/** Generic over the store's types only to pass the voice room's SQL hooks to the host. */
export class VoiceRoomApi<T extends StoreTypes = StoreTypes> {
  constructor(
    private readonly host: CellHost<T>,
    private readonly domain: CellDomain<VoiceRoomState, VoiceRoomCommand, VoiceRoomEvent, T>,
    private readonly forwarder: Forwarder,
    private readonly store: VoiceRoomStore,
    /** On a node without the cells role: every call goes whole to a cells node there. */
    private readonly cellsTier: CellsTier | null = null,
    /** Where new rooms' routers go; absent: a node without media (nothing recorded). */
    private readonly media?: Pick<MediaServers, 'place'>,
  ) {}

  /** Runs `method` with an untrusted request object; answers its declared reply. */
  async call<M extends RpcName>(
    method: M,
    raw: unknown,
    options: CallOptions = {},
  ): Promise<ReplyOf<M>> {
    const declared = declarationOf(method);
    const req = parseInput(declared.schema, raw);
    return declaredReply(replySchemaOf(method), method, await this.#answer(method, req, options));
  }

  /** The answer of `method` to the parsed `req`: run here, on the cells tier, or the owner's. */
  async #answer(method: RpcName, req: unknown, options: CallOptions): Promise<unknown> {
    if (this.cellsTier) {
      // Validated here (a proto message would coerce "1" to 1), decided on the cells node.
      const named = req as Partial<RoomRequest>;
      const key = named.room_id ? keyOf(named as RoomRequest) : null;
      const addr = await this.cellsTier.addressFor(key);
      return this.forwarder.call(addr, method, req, options.deadlineMs);
    }
    const declared = declarationOf(method);
    const ctx = this.contextOf(options);
    try {
      if ('handle' in declared) return await declared.handle(ctx, req);
      return await ctx.execute(req as RoomRequest, declared.toCommand(req), (result) =>
        declared.answer(result),
      );
    } catch (error) {
      if (!(error instanceof OwnerElsewhere)) throw error;
      return this.forward(error.route, method, req, options);
    }
  }

  /** What a declaration's handler may do in this call. */
  private contextOf(options: CallOptions): CallContext {
    return {
      store: this.store,
      placeMedia: () => this.media?.place() ?? null,
      execute: async (req, command, shape) => {
        const routed = await this.host.execute(this.domain, keyOf(req), command, {
          ...optionsOf(options),
          ...(req.request_id
            ? { requestId: req.request_id, fingerprint: requestFingerprint(command.type, req) }
            : {}),
        });
        if (routed.kind === 'remote') throw new OwnerElsewhere(routed);
        return shape(routed.value);
      },
      query: async (req, read, shape) => {
        const routed = await this.host.query(this.domain, keyOf(req), read, optionsOf(options));
        if (routed.kind === 'remote') throw new OwnerElsewhere(routed);
        return shape(routed.value);
      },
    };
  }

  private forward(
    routed: RemoteRoute,
    method: RpcName,
    req: unknown,
    options: CallOptions,
  ): Promise<unknown> {
    if (options.forwarded) {
      throw errors.NOT_OWNER_NODE('a node');
    }
    return toOwner(
      this.host,
      keyOf(req as RoomRequest),
      routed,
      () => this.forwarder.call(routed.addr, method, req, options.deadlineMs),
      options.rerouted ? null : () => this.call(method, req, { ...options, rerouted: true }),
    );
  }
}

/** What the host needs of the call: not to forward it again, and when its caller gives up. */
function optionsOf(options: CallOptions) {
  return {
    ...(options.forwarded ? { forwarded: true } : {}),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  };
}

function keyOf(req: RoomRequest): CellKey {
  return { appCode: req.app_code, roomId: req.room_id };
}
