/**
 * What one declaration of ./commands.ts says about an RPC, and the helpers that type it:
 * the request schema, how the call runs (a plain command built from the request, or a small
 * handler), how its reply is shaped, and its REST route. The gRPC service, the REST routes
 * and VoiceRoomApi are all derived from these declarations.
 */
import type { z } from 'zod';
import type { CommandResult } from '../../cell/cell.js';
import type { VoiceRoomCommand, VoiceRoomState } from '../domain/types.js';
import type { VoiceRoomStore } from './voice-store.js';

/** The room a request names (and, for a command, its request id). */
export interface RoomRequest {
  readonly app_code: string;
  readonly room_id: string;
  readonly request_id?: string | undefined;
}

/** What a handler may do: run a command or a query on the room's owner, read the catalog. */
export interface CallContext {
  readonly store: VoiceRoomStore;
  /** The media server a new room's router goes on; null on a node without media. */
  placeMedia(): string | null;
  /**
   * Runs `command` on the owner and shapes its result with `shape`. When the owner is another
   * node, `req` is forwarded and the owner's reply returned as it is (the owner shaped it).
   */
  execute(
    req: RoomRequest,
    command: VoiceRoomCommand,
    shape: (result: CommandResult) => unknown,
  ): Promise<unknown>;
  /** Reads the room's state on its owner; like `execute`, forwards `req` when the owner is away. */
  query<V>(
    req: RoomRequest,
    read: (state: VoiceRoomState, version: number) => V,
    shape: (value: V) => unknown,
  ): Promise<unknown>;
}

/** A request field that names the caller: REST fills it with the token's user. */
export type Identity = 'user_id' | 'operator_user_id' | 'sender_user_id' | 'owner_user_id';

export type Body = Readonly<Record<string, unknown>>;

/**
 * An RPC's REST route under /api/v1/voice. The request is `app_code` (the token's app),
 * `room_id` (from a `:room_id` path segment), `request_id` (commands: the body's, else the
 * `Idempotency-Key` header, else a new one) and the fields below; nothing else of the body is
 * read.
 */
export interface RestRoute<F extends string = string> {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** The request field the caller's own user id fills (it wins over the body). */
  readonly caller?: Identity & F;
  /** Body fields copied to the request field of the same name. */
  readonly body?: readonly F[];
  /** Values of `body` fields left out: only an absent field takes it, a null is a wrong type. */
  readonly defaults?: { readonly [K in F]?: unknown };
  /** Instead of `caller` and `body`, when which field the caller fills depends on the body. */
  readonly fields?: (me: string, body: Body) => { readonly [K in F]?: unknown };
  /** The status of a success (default 200). */
  readonly status?: 200 | 201;
  /**
   * The call creates a room, under the room-creation quota: the room a request with this
   * request id creates (a retry of a creation that committed is not a new creation).
   */
  readonly creates?: (appCode: string, requestId: string) => string;
}

type FieldOf<S extends z.ZodType> = Extract<keyof z.input<S>, string>;
type CommandOf<M> = Extract<VoiceRoomCommand, { readonly type: M }>;

/** An RPC that is one command built from its request, with a fixed reply shape. */
export interface PlainCommand<S extends z.ZodType, C extends VoiceRoomCommand> extends PlainFields<
  S,
  C
> {
  readonly kind: 'command';
}

interface PlainFields<S extends z.ZodType, C extends VoiceRoomCommand> {
  readonly schema: S;
  readonly toCommand: (req: z.output<S>) => C;
  /** Default: `{room_version, duplicate}`. */
  readonly reply?: (result: CommandResult) => unknown;
  readonly rest?: RestRoute<FieldOf<S>>;
}

/** An RPC with its own handler: a query, or a command that needs more than its request. */
export interface CustomCall<S extends z.ZodType, K extends 'command' | 'query'> {
  /** A command must carry a request id over gRPC (a retry must not take effect twice). */
  readonly kind: K;
  readonly schema: S;
  readonly handle: (ctx: CallContext, req: z.output<S>) => Promise<unknown>;
  readonly rest?: RestRoute<FieldOf<S>>;
}

/**
 * What the table must hold for RPC `M`: a command type of the decider is a plain command that
 * builds exactly that command, or a custom command; anything else is a query. Method
 * signatures: any request type is accepted here, the helpers below checked it.
 */
export type DeclarationOf<M extends string> = M extends VoiceRoomCommand['type']
  ? | {
        readonly kind: 'command';
        readonly schema: z.ZodType;
        toCommand(req: never): CommandOf<M>;
        reply?(result: CommandResult): unknown;
        readonly rest?: RestRoute;
      }
    | AnyCustom<'command'>
  : AnyCustom<'query'>;

interface AnyCustom<K> {
  readonly kind: K;
  readonly schema: z.ZodType;
  handle(ctx: CallContext, req: never): Promise<unknown>;
  readonly rest?: RestRoute;
}

/** Any declaration, as the dispatch sees it (the request was parsed with its schema). */
export type AnyDeclaration =
  | {
      readonly kind: 'command';
      readonly schema: z.ZodType;
      toCommand(req: unknown): VoiceRoomCommand;
      reply?(result: CommandResult): unknown;
      readonly rest?: RestRoute;
    }
  | {
      readonly kind: 'command' | 'query';
      readonly schema: z.ZodType;
      handle(ctx: CallContext, req: unknown): Promise<unknown>;
      readonly rest?: RestRoute;
    };

export function command<S extends z.ZodType, C extends VoiceRoomCommand>(
  declaration: PlainFields<S, C>,
): PlainCommand<S, C> {
  return { kind: 'command', ...declaration };
}

export function custom<S extends z.ZodType, K extends 'command' | 'query'>(
  declaration: CustomCall<S, K>,
): CustomCall<S, K> {
  return declaration;
}

/** The reply of most commands. */
export function commandReply(result: CommandResult): unknown {
  return { room_version: result.version, duplicate: result.duplicate };
}

/** A command whose decider answers with more (a mic seat's state): merged into the reply. */
export function withDecision(result: CommandResult): unknown {
  return { ...(commandReply(result) as object), ...(result.reply as object) };
}
