/**
 * The WebSocket protocol as data: one declaration per C→S event (its payload schema, its ACK
 * data schema, the refusal reasons its ACK may carry) and one per S→C frame (its data
 * schema). The hub validates every payload with its event's declared schema before the
 * handler runs, and the AsyncAPI document (./asyncapi.ts) is made from the same
 * declarations, so what is documented is what is enforced. Room kinds declare their own
 * events and frames next to their signalling and hand them to the hub and the document.
 */
import { z } from 'zod';
import type { AppError } from '../../shared/errors.js';
import { codesOfKind, errors } from '../../shared/error-codes.js';
import { firstIssueText } from '../../shared/parse-input.js';

/** A code of the one error registry (src/shared/error-codes.ts). */
export type ErrorName = keyof typeof errors;

/** A C→S event: `data` is checked with `payload`; the ACK's `data` is `ack`'s. */
export interface WsEventDeclaration<
  P extends z.ZodType = z.ZodType,
  A extends z.ZodType = z.ZodType,
> {
  readonly event: string;
  /** One line for the document. */
  readonly summary: string;
  readonly payload: P;
  readonly ack: A;
  /**
   * The `reason` codes a refused ACK (`code: -1`) may carry, besides BAD_REQUEST, INTERNAL
   * and REPLY_MISMATCH (an ACK off its schema), which every event may answer
   * (see {@link reasonsOf}).
   */
  readonly reasons: readonly string[];
  /**
   * The refusal of a payload `payload` rejects. Default: BAD_REQUEST `参数错误: <field>:
   * <rule>`; the hub's own events keep their older, shorter texts (./hub-events.ts).
   */
  readonly refuse?: (error: z.ZodError) => AppError;
}

/** Who receives an S→C frame. */
export type FrameAudience =
  /** A committed room event: every follower; `data` also has the room frame keys (RoomFrameMeta). */
  | 'room-event'
  /** Every follower of the room, outside the room's frame chain (media signalling). */
  | 'room'
  /** Every socket of one user (targeted). */
  | 'user';

/** An S→C frame (`code` 0, no `seq`). */
export interface WsFrameDeclaration<D extends z.ZodType = z.ZodType> {
  /** Unique among the frames: the event name, or the name plus a variant for a second shape. */
  readonly id: string;
  readonly event: string;
  readonly summary: string;
  readonly to: FrameAudience;
  readonly data: D;
}

/** What one part of the node (the hub, a room kind, the notifications) puts on `/ws`. */
export interface WsProtocol {
  readonly events: readonly WsEventDeclaration[];
  readonly frames: readonly WsFrameDeclaration[];
}

/** Declares a C→S event (typed: its handler takes the payload's output, returns the ACK's input). */
export function wsEvent<P extends z.ZodType, A extends z.ZodType>(
  declaration: WsEventDeclaration<P, A>,
): WsEventDeclaration<P, A> {
  return declaration;
}

/** Declares an S→C frame; `id` defaults to the event name. */
export function wsFrame<D extends z.ZodType>(
  declaration: Omit<WsFrameDeclaration<D>, 'id'> & { readonly id?: string },
): WsFrameDeclaration<D> {
  return { ...declaration, id: declaration.id ?? declaration.event };
}

/** Every reason an event's refused ACK may carry, sorted, without repeats. */
export function reasonsOf(declaration: WsEventDeclaration): readonly string[] {
  return [
    ...new Set<string>(['BAD_REQUEST', 'INTERNAL', 'REPLY_MISMATCH', ...declaration.reasons]),
  ].sort();
}

/** The payload as the declaration reads it, or its refusal (the handler never sees bad input). */
export function parseWsPayload<P extends z.ZodType, A extends z.ZodType>(
  declaration: WsEventDeclaration<P, A>,
  data: unknown,
): z.output<P> {
  const parsed = declaration.payload.safeParse(data);
  if (parsed.success) return parsed.data;
  throw declaration.refuse
    ? declaration.refuse(parsed.error)
    : errors.BAD_REQUEST(firstIssueText(parsed.error));
}

/**
 * Reasons of any call that reaches a room's cell (through a kind's API, possibly forwarded to
 * the room's owner): every outage of the error registry (retry) and every bug, as the REST
 * documents have them (../http/openapi.ts), a room id of another kind, and input the room's
 * API refuses.
 */
export const CELL_CALL_REASONS: readonly ErrorName[] = [
  ...codesOfKind('unavailable'),
  ...codesOfKind('internal'),
  'ROOM_KIND_MISMATCH',
  'INVALID_ARGUMENT',
];

/** The `data` of a frame that has none (`{}`). */
export const Empty = z.strictObject({});
