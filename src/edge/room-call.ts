/**
 * The one path a call of any room kind takes, whatever protocol brought it (REST, gRPC, the
 * WebSocket signalling): its request parsed with the schema its declaration gives; on a node
 * without the cells role, sent whole to a cells node; else run here by its handler, or, when
 * the room's owner is another node (the handler's `execute` or `query` threw OwnerElsewhere),
 * sent whole to that owner, once (./owner-forward.ts: a remembered route that proved stale
 * runs it again from the start). The request-id rule is the cell's (one id, one request:
 * src/cell/request-fingerprint.ts), whichever node decides. A kind's API (VoiceRoomApi,
 * MeetingApi) is this path plus its table: it checks the answer against the declared reply.
 */
import type { z } from 'zod';
import type { CellsTier } from '../cell/cells-tier.js';
import type { CellKey } from '../cell/lease.js';
import { errors } from '../shared/error-codes.js';
import { parseInput } from '../shared/parse-input.js';
import { OwnerElsewhere, toOwner } from './owner-forward.js';

export interface RoomCallOptions {
  /** The call came from another node: answer locally or refuse, never forward. */
  readonly forwarded?: boolean;
  /** Epoch ms after which the caller has given up (a gRPC deadline); forwarded with the call. */
  readonly deadlineMs?: number;
  /** This call already ran once on a remembered route that proved stale (./owner-forward.ts). */
  readonly rerouted?: boolean;
}

/** What the path needs of a room kind's table. */
export interface RoomCalls<M extends string> {
  /** Forgets a remembered owner (the host's route cache). */
  readonly host: { forgetRoute(key: CellKey): void };
  /** On a node without the cells role: every call goes whole to a cells node there. */
  readonly cellsTier: Pick<CellsTier, 'addressFor'> | null;
  /** The full request schema of `method`. */
  requestOf(method: M): z.ZodType;
  /** The room a parsed request names; null for a call about no room (the caller's list). */
  roomOf(method: M, req: unknown): CellKey | null;
  /** Runs the declaration's handler here; throws OwnerElsewhere when the owner is another node. */
  run(method: M, req: unknown, options: RoomCallOptions): Promise<unknown>;
  /** Sends the call to the node at `addr`, with the caller's deadline. */
  send(addr: string, method: M, req: unknown, raw: unknown, deadlineMs?: number): Promise<unknown>;
  /** A command without a request id: a second run would not be recognised as the first. */
  unkeyed(method: M, req: unknown): boolean;
}

/** The answer of `method` to the untrusted `raw` request: made here, or by the node that owns it. */
export async function answerCall<M extends string>(
  calls: RoomCalls<M>,
  method: M,
  raw: unknown,
  options: RoomCallOptions = {},
): Promise<unknown> {
  const req = parseInput(calls.requestOf(method), raw);
  if (calls.cellsTier) {
    // Validated here (a proto message would coerce "1" to 1), decided on the cells node.
    const addr = await calls.cellsTier.addressFor(calls.roomOf(method, req));
    return calls.send(addr, method, req, raw, options.deadlineMs);
  }
  try {
    return await calls.run(method, req, options);
  } catch (error) {
    if (!(error instanceof OwnerElsewhere)) throw error;
    if (options.forwarded) throw errors.NOT_OWNER_NODE('a node');
    const { route, key } = error;
    return toOwner(
      calls.host,
      key,
      route,
      () => calls.send(route.addr, method, req, raw, options.deadlineMs),
      options.rerouted
        ? null
        : () => answerCall(calls, method, raw, { ...options, rerouted: true }),
      calls.unkeyed(method, req),
    );
  }
}

/** What the host needs of a call: not to forward it again, and when its caller gives up. */
export function hostOptions(options: RoomCallOptions) {
  return {
    ...(options.forwarded ? { forwarded: true } : {}),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  };
}
