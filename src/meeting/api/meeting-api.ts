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
import { OwnerElsewhere } from '../../edge/owner-forward.js';
import {
  answerCall,
  hostOptions,
  type RoomCallOptions,
  type RoomCalls,
} from '../../edge/room-call.js';
import { declaredReply } from '../../edge/declared-reply.js';
import {
  cellRequestId,
  meetingCalls,
  meetingMethods,
  meetingReplySchemaOf,
  type MeetingMethod,
  type MeetingReplyOf,
} from './commands.js';
import type { MeetingContext, MeetingDeclaration, MeetingRequest } from './declaration.js';
import type { MeetingInviteDeps } from './invites.js';
import type { MeetingStore } from './meeting-store.js';
import type { MeetingPasswords } from './password-lock.js';
import { Caller, InRoom, RequestIdField, SystemCaller } from './requests.js';

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

export type MeetingCallOptions = RoomCallOptions;

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
function fullRequestOf(d: MeetingDeclaration): z.ZodType {
  return z.strictObject({
    ...(d.caller === 'system' ? SystemCaller : Caller),
    ...(d.scope === 'room' ? InRoom : {}),
    ...d.params,
    ...d.body.shape,
    ...(d.kind === 'command' ? { request_id: RequestIdField.optional() } : {}),
  });
}
const schemas = new Map<MeetingMethod, z.ZodType>(
  meetingMethods.map((method) => [method, fullRequestOf(meetingCalls[method])]),
);

/** Meeting ids never change: a bounded cache saves a query per reply. */
const ID_CACHE_MAX = 10_000;

export class MeetingApi<T extends StoreTypes = StoreTypes> {
  readonly #ids = new Map<string, number>();
  readonly #newRoomCode: () => string;
  readonly #calls: RoomCalls<MeetingMethod>;

  /** Where meetings' media is (a recording's download streams from there). */
  get media(): MediaServers {
    return this.deps.media ?? NO_MEDIA;
  }

  constructor(private readonly deps: MeetingApiDeps<T>) {
    this.#newRoomCode = deps.newRoomCode ?? randomRoomCode;
    this.#calls = {
      host: deps.host,
      cellsTier: deps.cellsTier ?? null,
      requestOf: (method) => schemas.get(method)!,
      roomOf: (method, req) =>
        meetingCalls[method].scope === 'room' ? keyOf(req as RoomOfRequest) : null,
      run: (method, req, options) => this.#run(method, req as MeetingRequest, options),
      // The owner parses the request as the caller sent it (MeetingCall carries it as JSON).
      send: (addr, method, _req, raw, deadlineMs) =>
        deps.forwarder.callMeeting(addr, method, raw, deadlineMs),
      unkeyed: (method, req) =>
        meetingCalls[method].kind === 'command' && (req as MeetingRequest).request_id === undefined,
    };
  }

  /** Runs `method` with an untrusted request object; answers its declared reply. */
  async call<M extends MeetingMethod>(
    method: M,
    raw: unknown,
    options: MeetingCallOptions = {},
  ): Promise<MeetingReplyOf<M>> {
    // MeetingCall names its method as a string: only a declared one runs.
    if (!Object.hasOwn(meetingCalls, method)) {
      throw errors.INVALID_ARGUMENT(`unknown meeting method ${String(method)}`);
    }
    const answer = await answerCall(this.#calls, method, raw, options);
    return declaredReply(meetingReplySchemaOf(method), method, answer);
  }

  /** Runs `method` here: a call about one meeting reads its state on the owner first. */
  async #run(
    method: MeetingMethod,
    req: MeetingRequest,
    options: MeetingCallOptions,
  ): Promise<unknown> {
    const declared = meetingCalls[method];
    let state: MeetingState | null = null;
    if (declared.scope === 'room') {
      const key = keyOf(req as RoomOfRequest);
      const routed = await this.deps.host.query(
        this.deps.domain,
        key,
        (s: MeetingState) => s,
        hostOptions(options),
      );
      if (routed.kind === 'remote') throw new OwnerElsewhere(routed, key);
      state = routed.value;
    }
    const handle = declared.handle as (
      c: MeetingContext,
      r: unknown,
      s: unknown,
    ) => Promise<unknown>;
    return handle(this.#context(options), req, state);
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
        const key = keyOf(req);
        const routed = await host.execute(domain, key, command, {
          ...hostOptions(options),
          // The request as the caller sent it, named by the command it runs: a retry that
          // the edge turns into another command (a new password hash) is still the same.
          ...(requestId ? { requestId, fingerprint: requestFingerprint(command.type, req) } : {}),
        });
        if (routed.kind === 'remote') throw new OwnerElsewhere(routed, key);
        // The cell's reply to this command is the domain's replyOf it (../domain/view.ts),
        // typed there per command; the one place the cell's `unknown` takes that type.
        return shape(routed.value as Parameters<typeof shape>[0]);
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
}

type RoomOfRequest = MeetingRequest & { room_code: string };

function keyOf(req: RoomOfRequest) {
  return { appCode: req.app_code, roomId: req.room_code };
}
