/**
 * What one declaration of ./commands.ts says about a meeting endpoint: its REST route, the
 * schema of what REST takes from the body (or query string), whether it runs in the
 * meeting's cell (so on its owner), and the handler. MeetingApi, the REST routes and the
 * gRPC `MeetingCall` are derived from these declarations.
 */
import type { z } from 'zod';
import type { CommandResult } from '../../cell/cell.js';
import type { MeetingCommand, MeetingState } from '../domain/types.js';
import type { MeetingReason } from '../domain/errors.js';
import type { errors } from '../../shared/error-codes.js';
import type { MeetingReplies } from '../domain/view.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';
import type { Clock } from '../../shared/clock.js';
import type { MeetingInviteDeps } from './invites.js';
import type { MeetingStore } from './meeting-store.js';
import type { MeetingPasswords } from './password-lock.js';

/** The full request of an endpoint, as parsed. */
export interface MeetingRequest {
  readonly app_code: string;
  /** The caller: the token's user (named apart from body fields like kick's `user_id`). */
  readonly caller_id: string;
  readonly room_code?: string;
  /** Commands: the caller's id for this request (scoped to the caller before the cell). */
  readonly request_id?: string;
}

export interface MeetingContext {
  readonly store: MeetingStore;
  readonly passwords: MeetingPasswords;
  readonly clock: Clock;
  /** Where meetings' routers are placed, and the orchestrator of each meeting's server. */
  readonly media: MediaServers;
  /** The invite tokens' store, the notification centre and the inviters' profiles. */
  readonly invites: MeetingInviteDeps;
  /** Draws a fresh `XXX-XXX-XXX` code. */
  readonly newRoomCode: () => string;
  /** The meeting's numeric id (`meeting_rooms.id`), cached: it never changes. */
  meetingId(appCode: string, roomCode: string): Promise<number | null>;
  /**
   * Runs `command` in the cell of `room_code` and shapes its result. When the owner is
   * another node this throws OwnerElsewhere (../../edge/owner-forward.ts): MeetingApi sends
   * the whole call there, and the owner's answer is the call's.
   */
  execute<K extends MeetingCommand['type'], V>(
    req: MeetingRequest & { readonly room_code: string },
    command: Extract<MeetingCommand, { readonly type: K }>,
    shape: (result: DecidedResult<K>) => V | Promise<V>,
  ): Promise<V>;
}

/** A command's result, its reply as the decider answers that command (../domain/view.ts). */
export type DecidedResult<K extends MeetingCommand['type']> = Omit<CommandResult, 'reply'> & {
  readonly reply: K extends keyof MeetingReplies ? MeetingReplies[K] : unknown;
};

/** The refusals of the guard `mustBeInProgress` (../domain/guards.ts): no such or an ended meeting. */
export const IN_PROGRESS = ['MEETING_NOT_FOUND', 'MEETING_ENDED'] as const;
/** The refusals of `checkMeetingAccess`: no such meeting, or the caller is not in it (ended too). */
export const ACCESS = ['MEETING_NOT_FOUND', 'NOT_IN_MEETING'] as const;

export interface RestRoute {
  /** The route's one line in the OpenAPI document. */
  readonly summary: string;
  /** Only the host may call it (仅主持人可操作, 403). */
  readonly hostOnly?: true;
  readonly method: 'GET' | 'POST';
  /** Under /api/v1/meeting; `:code` is the room code. */
  readonly path: string;
  readonly status?: 200 | 201;
  /**
   * The per-user limit REST checks before the call (../http/meeting-routes.ts): `create`,
   * the creation quota; `chat`, chat lines. A retry of a decided request is not counted.
   */
  readonly limit?: 'create' | 'chat';
}

export interface MeetingDeclaration<
  B extends z.ZodObject = z.ZodObject,
  R extends z.ZodType = z.ZodType,
> {
  /**
   * A command carries the caller's request id when it names one (REST: body, else
   * Idempotency-Key); without one it runs unrecorded, a new command each time.
   */
  readonly kind: 'command' | 'query';
  /** Absent: an internal call (the WebSocket signalling's), served only by MeetingApi. */
  readonly rest?: RestRoute;
  /** What REST takes from the body (POST) or the query string (GET). */
  readonly body: B;
  /**
   * Fields REST takes from the path besides `:code` (e.g. `:token`), each named as in the
   * path; the full request carries them beside the body's fields.
   */
  readonly params?: Readonly<Record<string, z.ZodType>>;
  /**
   * `room`: the endpoint names a meeting (`:code`); the API reads its state on the owner
   * first (forwarding the whole call when the owner is away) and passes it to `handle`.
   */
  readonly scope: 'room' | 'none';
  /** `system`: only the node calls it (a media failover), as ./requests.ts `SystemCaller`. */
  readonly caller?: 'system';
  /**
   * What it may be refused with by its own rules and limits: the meeting's reasons
   * (../domain/errors.ts) and the error registry's. Input errors, a reused request id, a
   * room code of another kind and the runtime's outages apply to every call and are not
   * listed. The API documents list them per operation; refusals.unit.test.ts checks the
   * decider never refuses a command otherwise.
   */
  readonly refuses: readonly (MeetingReason | keyof typeof errors)[];
  /** What it answers (./replies.ts). */
  readonly reply: R;
  readonly handle: (
    ctx: MeetingContext,
    req: MeetingRequest & z.output<B>,
    state: MeetingState | null,
  ) => Promise<z.output<R>>;
}

export function declare<B extends z.ZodObject, R extends z.ZodType>(
  d: MeetingDeclaration<B, R>,
): MeetingDeclaration<B, R> {
  return d;
}
