/**
 * What one declaration of ./commands.ts says about an RPC, and the helpers that type it:
 * the request schema, how the call runs (a plain command built from the request, or a small
 * handler), how its reply is shaped, and its REST route. The gRPC service, the REST routes
 * and VoiceRoomApi are all derived from these declarations.
 */
import type { z } from 'zod';
import type { CommandResult } from '../../cell/cell.js';
import type { VoiceRoomCommand, VoiceRoomState } from '../domain/types.js';
import type { VoiceRoomReason } from '../domain/errors.js';
import type { errors } from '../../shared/error-codes.js';
import type { ChatAllowance } from './chat-allowance.js';
import type { VoiceRoomStore } from './voice-store.js';
import type { OneUserField } from './requests.js';
import { CommandReply } from './replies.js';
import { declaredReply } from '../../edge/declared-reply.js';

/** The room a request names (and, for a command, its request id). */
export interface RoomRequest {
  readonly app_code: string;
  readonly room_id: string;
  readonly request_id?: string | undefined;
}

/** What a handler may do: run a command or a query on the room's owner, read the catalog. */
export interface CallContext {
  readonly store: VoiceRoomStore;
  /** The public chat's per-user rate limit. */
  readonly chat: ChatAllowance;
  /** Server time, epoch ms (a ranking's day). */
  nowMs(): number;
  /** The media server a new room's router goes on; null on a node without media. */
  placeMedia(): string | null;
  /**
   * Runs `command` on the owner and shapes its result with `shape`. When the owner is another
   * node this throws OwnerElsewhere (../../edge/owner-forward.ts): the API sends the whole
   * call there, and the owner's answer is the call's.
   */
  execute<V>(
    req: RoomRequest,
    command: VoiceRoomCommand,
    shape: (result: CommandResult) => V | Promise<V>,
  ): Promise<V>;
  /** Reads the room's state on its owner; like `execute`, the owner elsewhere takes the call. */
  query<X, V>(
    req: RoomRequest,
    read: (state: VoiceRoomState, version: number) => X,
    shape: (value: X) => V | Promise<V>,
  ): Promise<V>;
}

/** A request field that names the caller: REST fills it with the token's user. */
export type Identity = OneUserField;

export type Body = Readonly<Record<string, unknown>>;

/**
 * What a call may be refused with by its own rules: the room's (../domain/errors.ts) and the
 * error registry's. Input errors (INVALID_ARGUMENT), a reused request id and the runtime's
 * outages apply to every call and are not listed. The API documents list them per
 * operation; refusals.unit.test.ts checks the decider never refuses a command otherwise.
 */
export type Refusable = VoiceRoomReason | keyof typeof errors;

/**
 * A query-string parameter of a GET route: its text, checked by its kind, fills the request
 * field of the same name. Query strings are text, so each kind says exactly which text it
 * takes; any other (a repeated parameter too) is refused with 400 INVALID_ARGUMENT. One
 * declaration drives both the parsing (../http/voice-routes.ts) and the OpenAPI parameter
 * (../http/voice-route-docs.ts).
 */
export type QueryParam =
  | {
      /**
       * Decimal digits only (no sign, `1e3`, `0x10` or spaces): absent, `default`; below
       * `min`, refused; above `max`, taken as `max` (a page size: asking for more is no error).
       */
      readonly kind: 'integer';
      readonly default: number;
      readonly min: number;
      readonly max: number;
      readonly description: string;
    }
  | {
      /** One of `values`, required: absent or any other text is refused. */
      readonly kind: 'enum';
      readonly values: readonly [string, ...string[]];
      readonly description: string;
    }
  | {
      /**
       * An account id in decimal, as in a path (`?after=17`), which is also the request's text
       * form: the OpenAPI document calls it an integer. Absent: the field is left out.
       */
      readonly kind: 'user_id';
      readonly description: string;
    };

/**
 * An RPC's REST route under /api/v1/voice. The request is `app_code` (the token's app),
 * `room_id` (from a `:room_id` path segment), `request_id` (commands: the body's, else the
 * `Idempotency-Key` header, else a new one) and the fields below; nothing else of the body or
 * the query string is read.
 */
export interface RestRoute<F extends string = string> {
  /** The route's one line in the OpenAPI document. */
  readonly summary: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** The request field the caller's own user id fills (it wins over the body). */
  readonly caller?: Identity & F;
  /**
   * Body fields copied to the request field of the same name. A user id among them
   * (./requests.ts `USER_FIELDS`) is a JSON number in the body, its decimal text in the request.
   */
  readonly body?: readonly F[];
  /** Values of `body` fields left out: only an absent field takes it, a null is a wrong type. */
  readonly defaults?: { readonly [K in F]?: unknown };
  /** A GET route's query-string parameters, each filling the request field of its name. */
  readonly query?: { readonly [K in F]?: QueryParam };
  /**
   * Instead of `caller` and copying `body`, when which field the caller fills depends on the
   * body: the request fields made of the caller and the `body` fields read (user ids in text).
   */
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

/** An RPC that is one command built from its request, answered by `answer` as `reply`. */
export interface PlainCommand<
  S extends z.ZodType,
  C extends VoiceRoomCommand,
  R extends z.ZodType,
> extends PlainFields<S, C, R> {
  readonly kind: 'command';
}

interface PlainFields<S extends z.ZodType, C extends VoiceRoomCommand, R extends z.ZodType> {
  readonly schema: S;
  readonly refuses: readonly Refusable[];
  readonly toCommand: (req: z.output<S>) => C;
  /** What it answers (./replies.ts). */
  readonly reply: R;
  readonly answer: (result: CommandResult) => z.output<R>;
  readonly rest?: RestRoute<FieldOf<S>>;
}

/** An RPC with its own handler: a query, or a command that needs more than its request. */
export interface CustomCall<
  S extends z.ZodType,
  K extends 'command' | 'query',
  R extends z.ZodType,
> {
  /** A command must carry a request id over gRPC (a retry must not take effect twice). */
  readonly kind: K;
  readonly schema: S;
  readonly refuses: readonly Refusable[];
  readonly reply: R;
  readonly handle: (ctx: CallContext, req: z.output<S>) => Promise<z.output<R>>;
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
        readonly refuses: readonly Refusable[];
        readonly reply: z.ZodType;
        toCommand(req: never): CommandOf<M>;
        answer(result: CommandResult): unknown;
        readonly rest?: RestRoute;
      }
    | AnyCustom<'command'>
  : AnyCustom<'query'>;

interface AnyCustom<K> {
  readonly kind: K;
  readonly schema: z.ZodType;
  readonly refuses: readonly Refusable[];
  readonly reply: z.ZodType;
  handle(ctx: CallContext, req: never): Promise<unknown>;
  readonly rest?: RestRoute;
}

/** Any declaration, as the dispatch sees it (the request was parsed with its schema). */
export type AnyDeclaration =
  | {
      readonly kind: 'command';
      readonly schema: z.ZodType;
      readonly refuses: readonly Refusable[];
      readonly reply: z.ZodType;
      toCommand(req: unknown): VoiceRoomCommand;
      answer(result: CommandResult): unknown;
      readonly rest?: RestRoute;
    }
  | {
      readonly kind: 'command' | 'query';
      readonly schema: z.ZodType;
      readonly refuses: readonly Refusable[];
      readonly reply: z.ZodType;
      handle(ctx: CallContext, req: unknown): Promise<unknown>;
      readonly rest?: RestRoute;
    };

/** A command answered with the version it made and whether it was a retry. */
export function command<S extends z.ZodType, C extends VoiceRoomCommand>(
  declaration: Omit<PlainFields<S, C, typeof CommandReply>, 'reply' | 'answer'>,
): PlainCommand<S, C, typeof CommandReply> {
  return { kind: 'command', reply: CommandReply, answer: commandReply, ...declaration };
}

/**
 * A command whose decider answers more (a mic seat's state, where the router is now): the
 * decision's fields merged into the version and duplicate flag, checked against `reply`.
 */
export function commandWithDecision<
  S extends z.ZodType,
  C extends VoiceRoomCommand,
  R extends z.ZodType,
>(declaration: Omit<PlainFields<S, C, R>, 'answer'>): PlainCommand<S, C, R> {
  return {
    kind: 'command',
    answer: (result) => withDecision(declaration.reply, result),
    ...declaration,
  };
}

export function custom<S extends z.ZodType, K extends 'command' | 'query', R extends z.ZodType>(
  declaration: CustomCall<S, K, R>,
): CustomCall<S, K, R> {
  return declaration;
}

/** The reply of most commands. */
export function commandReply(result: CommandResult): z.output<typeof CommandReply> {
  return { room_version: result.version, duplicate: result.duplicate };
}

/** The decider's answer (a record of its own) merged into the command's reply, as `reply`. */
export function withDecision<R extends z.ZodType>(reply: R, result: CommandResult): z.output<R> {
  return declaredReply(reply, 'a decision', {
    ...decisionFields(result.reply),
    ...commandReply(result),
  });
}

function decisionFields(reply: unknown): Record<string, unknown> {
  return typeof reply === 'object' && reply !== null ? { ...reply } : {};
}
