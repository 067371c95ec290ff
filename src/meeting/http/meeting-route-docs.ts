/**
 * The documentation of the meeting REST routes (../../edge/http/openapi.ts), derived from the
 * declarations of ../api/commands.ts: the summary and who may call are declared with the
 * route; the body (POST) or query string (GET) is the declaration's `body` schema, what the
 * client sends (the caller, the app and the room code are never body fields); the answer is
 * its reply.
 */
import type { MeetingDeclaration } from '../api/declaration.js';
import { InRoom } from '../api/requests.js';
import { meetingReasons } from '../domain/errors.js';
import { errors } from '../../shared/error-codes.js';
import type { Refusal } from '../../edge/http/openapi.js';
import {
  declaredRefusals,
  documented,
  jsonSchemaOf,
  operationIdOf,
  replySchemaOf,
  type JsonSchema,
  type RouteDoc,
} from '../../edge/http/openapi.js';

type Documented = ReturnType<typeof documented>;

const REFUSED =
  "Invalid input, or refused by the meeting's rules (会议已结束, 你当前未在会议中…): the seed's message";
const HOST_ONLY = 'Only the host may do this (仅主持人可操作)';
const NOT_FOUND = 'No such meeting (会议不存在), also for a code not of the form XXX-XXX-XXX';

const LOOKUPS =
  'Too many unknown codes from this user or address: every code answers this until the window ends (Retry-After)';
/** The limits of docs/meetings.md, by call (429, `Retry-After`). */
const LIMITED: Partial<Record<string, string>> = {
  CreateMeeting: 'Too many meetings created in the window (CREATE_RATE_LIMITED)',
  SendChat: `Too many chat lines in the window (CHAT_RATE_LIMITED); or: ${LOOKUPS}`,
  InviteMembers: `Too many invitees for the inviter or the meeting (INVITE_RATE_LIMITED); or: ${LOOKUPS}`,
};
const REUSED = 'The request_id was used for another request (REQUEST_ID_REUSED)';
const OPEN_MEETINGS = 'The caller hosts the most meetings not ended allowed (TOO_MANY_OPEN_ROOMS)';

/**
 * The refusals a meeting call may answer: its declaration's (the meeting's rules and the
 * call's limits), and for a call on a meeting a code of another kind of room and the lookup
 * limit; for a command a reused request_id.
 */
function refusalsOf(declared: MeetingDeclaration): Refusal[] {
  const room =
    declared.scope === 'room'
      ? [errors.ROOM_KIND_MISMATCH, errors.MEETING_LOOKUP_RATE_LIMITED]
      : [];
  const command = declared.kind === 'command' ? [errors.REQUEST_ID_REUSED] : [];
  return [...declaredRefusals(declared.refuses, meetingReasons), ...room, ...command];
}

/** Path parameters other than these are documented as plain text. */
const PARAMS: Record<string, JsonSchema> = {
  code: {
    ...jsonSchemaOf(InRoom.room_code),
    description: "The meeting's room code XXX-XXX-XXX",
  },
  token: { type: 'string', description: 'The invite token of the meeting_invite notification' },
};

const idempotencyKey = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description:
        'The request id when the body has no `request_id` (a retry answers the first outcome)',
    },
  },
};

/** The documentation of a declared call's REST route (throws when CALLS has no line for it). */
export function meetingRouteDoc(name: string, declared: MeetingDeclaration): Documented {
  const route = declared.rest;
  if (!route) throw new Error(`meeting call ${name} has no REST route to document`);
  const input = jsonSchemaOf(declared.body);
  if (declared.kind === 'command') addRequestIdNote(input);
  const params = route.path.match(/:\w+/g)?.map((p) => p.slice(1)) ?? [];
  const responses: Record<number, string> = {
    [route.status ?? 200]: 'The result (docs/meetings.md)',
    400: REFUSED,
  };
  if (route.hostOnly) responses[403] = HOST_ONLY;
  if (declared.scope === 'room') responses[404] = NOT_FOUND;
  const limited = LIMITED[name] ?? (declared.scope === 'room' ? LOOKUPS : undefined);
  if (limited) responses[429] = limited;
  if (declared.kind === 'command') responses[409] = REUSED;
  if (route.limit === 'create') responses[409] = `${OPEN_MEETINGS}; or: ${REUSED}`;
  const doc: RouteDoc = {
    operationId: operationIdOf(name),
    tag: 'meetings',
    access: 'user',
    summary: route.summary,
    responses,
    refusals: refusalsOf(declared),
    data: replySchemaOf(declared.reply),
    ...(params.length > 0
      ? {
          params: {
            type: 'object',
            required: params,
            properties: Object.fromEntries(params.map((p) => [p, PARAMS[p] ?? { type: 'string' }])),
          },
        }
      : {}),
    ...(declared.kind === 'command' ? { headers: idempotencyKey } : {}),
    ...(route.method === 'GET' ? (hasProperties(input) ? { query: input } : {}) : { body: input }),
  };
  return documented(doc);
}

function hasProperties(schema: JsonSchema): boolean {
  return Object.keys((schema.properties as object | undefined) ?? {}).length > 0;
}

function addRequestIdNote(schema: JsonSchema): void {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties?.request_id) return;
  properties.request_id = {
    ...properties.request_id,
    description:
      'Idempotency: a retry with the same id answers the first outcome (or Idempotency-Key)',
  };
}
