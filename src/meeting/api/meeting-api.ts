/**
 * The meeting API, protocol-neutral: validates a request with its endpoint's schema, runs
 * the endpoint as ./commands.ts declares it on the meeting's owner (here, or forwarded once
 * to the owner's advertise address over gRPC `MeetingCall`) and shapes the reply. The REST
 * routes and the gRPC server both call it.
 */
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { StoreTypes } from '../../cell/cell-store.js';
import type { CellDomain } from '../../cell/domain.js';
import type { CellHost } from '../../cell/host.js';
import type { CellsTier } from '../../cell/cells-tier.js';
import { requestFingerprint } from '../../cell/request-fingerprint.js';
import type { MeetingCommand, MeetingEvent, MeetingState } from '../domain/types.js';
import { singleMediaServer, type MediaServers } from '../../media-cluster/media-servers.js';
import type { Clock } from '../../shared/clock.js';
import { errors } from '../../shared/error-codes.js';
import { parseInput } from '../../shared/parse-input.js';
import { OwnerElsewhere, toOwner, type RemoteRoute } from '../../edge/owner-forward.js';
import { declaredReply } from '../../edge/declared-reply.js';
import {
  cellRequestId,
  meetingCalls,
  meetingReplySchemaOf,
  type MeetingMethod,
  type MeetingReplyOf,
} from './commands.js';
import type { MeetingContext, MeetingRequest } from './declaration.js';
import type { MeetingInviteDeps } from './invites.js';
import type { MeetingStore } from './meeting-store.js';
import type { MeetingPasswords } from './password-lock.js';
import { Caller, InRoom, RequestIdField } from './requests.js';

/** Sends a meeting call to the owner node; the owner must not forward it again. */

const NO_MEDIA = singleMediaServer('none', null);
export interface MeetingForwarder {
  callMeeting(
    addr: string,
    method: MeetingMethod,
    request: unknown,
    deadlineMs?: number,
  ): Promise<unknown>;
}

export interface MeetingCallOptions {
  /** The call came from another node: answer locally or refuse, never forward. */
  readonly forwarded?: boolean;
  /** Epoch ms after which the caller has given up; forwarded with the call. */
  readonly deadlineMs?: number;
  /** This call already ran once on a remembered route that proved stale (../owner-forward.ts). */
  readonly rerouted?: boolean;
}

export interface MeetingApiDeps<T extends StoreTypes> {
  readonly host: CellHost<T>;
  readonly domain: CellDomain<MeetingState, MeetingCommand, MeetingEvent, T>;
  readonly forwarder: MeetingForwarder;
  readonly store: MeetingStore;
  readonly passwords: MeetingPasswords;
  readonly clock: Clock;
  /** Where meetings' routers go (one per meeting); absent: no media on this node. */
  readonly media?: MediaServers;
  readonly invites: MeetingInviteDeps;
  /** Draws a room code; default: 9 random digits `XXX-XXX-XXX` (node:crypto). */
  readonly newRoomCode?: () => string;
  /** On a node without the cells role: every call goes whole to a cells node there. */
  readonly cellsTier?: CellsTier;
}

/** `XXX-XXX-XXX` from 9 uniformly random digits. */
export function randomRoomCode(): string {
  const digits = String(randomInt(0, 1_000_000_000)).padStart(9, '0');
  return `${digits.slice(0, 3)}-${digits.slice(3, 6)}-${digits.slice(6)}`;
}

/**
 * The full request schema of each endpoint: who calls, the meeting, the body, and for a
 * command the request id when the caller named one (without one it runs unrecorded).
 */
const schemas = Object.fromEntries(
  Object.entries(meetingCalls).map(([method, d]) => [
    method,
    z.strictObject({
      ...Caller,
      ...(d.scope === 'room' ? InRoom : {}),
      ...d.params,
      ...d.body.shape,
      ...(d.kind === 'command' ? { request_id: RequestIdField.optional() } : {}),
    }),
  ]),
) as unknown as Record<MeetingMethod, z.ZodType>;

/** Meeting ids never change: a bounded cache saves a query per reply. */
const ID_CACHE_MAX = 10_000;

export class MeetingApi<T extends StoreTypes = StoreTypes> {
  readonly #ids = new Map<string, number>();
  readonly #newRoomCode: () => string;

  constructor(private readonly deps: MeetingApiDeps<T>) {
    this.#newRoomCode = deps.newRoomCode ?? randomRoomCode;
  }

  /** Runs `method` with an untrusted request object; answers its declared reply. */
  async call<M extends MeetingMethod>(
    method: M,
    raw: unknown,
    options: MeetingCallOptions = {},
  ): Promise<MeetingReplyOf<M>> {
    const declared = meetingCalls[method];
    if (!declared) throw errors.INVALID_ARGUMENT(`unknown meeting method ${String(method)}`);
    const req = parseInput(schemas[method], raw) as MeetingRequest;
    const answer = await this.#answer(method, req, raw, options);
    return declaredReply(meetingReplySchemaOf(method), method, answer);
  }

  /** The answer of `method` to `req` (parsed from `raw`): run here, on the cells tier, or the owner's. */
  async #answer(
    method: MeetingMethod,
    req: MeetingRequest,
    raw: unknown,
    options: MeetingCallOptions,
  ): Promise<unknown> {
    const declared = meetingCalls[method];
    const { cellsTier } = this.deps;
    if (cellsTier) {
      const key =
        declared.scope === 'room' ? keyOf(req as MeetingRequest & { room_code: string }) : null;
      const addr = await cellsTier.addressFor(key);
      return this.deps.forwarder.callMeeting(addr, method, raw, options.deadlineMs);
    }
    const ctx = this.#context(options);
    try {
      let state: MeetingState | null = null;
      if (declared.scope === 'room') {
        const routed = await this.deps.host.query(
          this.deps.domain,
          keyOf(req as MeetingRequest & { room_code: string }),
          (s: MeetingState) => s,
          hostOptions(options),
        );
        if (routed.kind === 'remote') throw new OwnerElsewhere(routed);
        state = routed.value;
      }
      return await (
        declared.handle as (c: MeetingContext, r: unknown, s: unknown) => Promise<unknown>
      )(ctx, req, state);
    } catch (error) {
      if (!(error instanceof OwnerElsewhere)) throw error;
      return this.#forward(error.route, method, raw, options);
    }
  }

  #context(options: MeetingCallOptions): MeetingContext {
    const { store, passwords, clock, invites, host, domain } = this.deps;
    return {
      store,
      passwords,
      clock,
      invites,
      newRoomCode: this.#newRoomCode,
      media: this.deps.media ?? NO_MEDIA,
      meetingId: (appCode, roomCode) => this.#meetingId(appCode, roomCode),
      execute: async (req, command, shape) => {
        const requestId = cellRequestId(req);
        const routed = await host.execute(domain, keyOf(req), command, {
          ...hostOptions(options),
          // The request as the caller sent it, named by the command it runs: a retry that
          // the edge turns into another command (a new password hash) is still the same.
          ...(requestId ? { requestId, fingerprint: requestFingerprint(command.type, req) } : {}),
        });
        if (routed.kind === 'remote') throw new OwnerElsewhere(routed);
        return shape(routed.value);
      },
    };
  }

  async #meetingId(appCode: string, roomCode: string): Promise<number | null> {
    const key = `${appCode}\n${roomCode}`;
    const cached = this.#ids.get(key);
    if (cached !== undefined) return cached;
    const id = await this.deps.store.meetingIdOf(appCode, roomCode);
    if (id !== null) {
      if (this.#ids.size >= ID_CACHE_MAX) this.#ids.clear();
      this.#ids.set(key, id);
    }
    return id;
  }

  #forward(
    routed: RemoteRoute,
    method: MeetingMethod,
    raw: unknown,
    options: MeetingCallOptions,
  ): Promise<unknown> {
    if (options.forwarded) throw errors.NOT_OWNER_NODE('a node');
    const req = raw as MeetingRequest & { room_code: string };
    return toOwner(
      this.deps.host,
      keyOf(req),
      routed,
      () => this.deps.forwarder.callMeeting(routed.addr, method, raw, options.deadlineMs),
      options.rerouted ? null : () => this.call(method, raw, { ...options, rerouted: true }),
      meetingCalls[method].kind === 'command' && req.request_id === undefined,
    );
  }
}

function hostOptions(options: MeetingCallOptions) {
  return {
    ...(options.forwarded ? { forwarded: true } : {}),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  };
}

function keyOf(req: MeetingRequest & { room_code: string }) {
  return { appCode: req.app_code, roomId: req.room_code };
}
