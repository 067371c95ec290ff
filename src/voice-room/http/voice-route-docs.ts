/**
 * The documentation of the voice-room REST routes (../../edge/http/openapi.ts), derived from
 * the RPC declarations of ../api/commands.ts (each route's summary is declared with it): a route's body is the declared body fields (and
 * `request_id` for a command) with their schemas taken from the RPC's request schema; the
 * fields the caller's token fills (`user_id`, `operator_user_id`, …), `app_code` and the path's
 * `room_id` are not body fields.
 */
import type { RpcName } from '../api/commands.js';
import type { AnyDeclaration } from '../api/declaration.js';
import { voiceRoomReasons } from '../domain/errors.js';
import { errors } from '../../shared/error-codes.js';
import {
  documented,
  jsonSchemaOf,
  operationIdOf,
  propertyOf,
  replySchemaOf,
  type JsonSchema,
  type RouteDoc,
} from '../../edge/http/openapi.js';

type Documented = ReturnType<typeof documented>;

/** CreateRoom's own refusals. */
const CREATE_REFUSALS = {
  409: 'Too many open rooms (TOO_MANY_OPEN_ROOMS), or the request_id was used otherwise',
  429: 'Too many creations (CREATE_RATE_LIMITED, with Retry-After)',
};
/** What a room may refuse; `reason` is the code (docs/errors.md's table of refusals). */
const ROOM_REFUSALS = {
  400: "Invalid input, or not possible in the room's state (ROOM_CLOSED, SEAT_OCCUPIED…)",
  403: 'Not allowed (NOT_OWNER, NOT_ADMIN, USER_BANNED…)',
  404: 'No such room, mic seat or gift',
  409: 'A conflict (GIFT_PRICE_CHANGED: retry; request_id used for another operation)',
};

/**
 * The refusals a room's call may answer: any rule of the room (the decider refuses each
 * command with some of them; docs/errors.md), a room id of a meeting, a reused request_id.
 * A creation answers the creation limits instead of a room's missing.
 */
function refusalsOf(declared: AnyDeclaration) {
  const room = declared.rest!.creates
    ? [errors.TOO_MANY_OPEN_ROOMS, errors.CREATE_RATE_LIMITED]
    : [errors.ROOM_KIND_MISMATCH];
  const command = declared.kind === 'command' ? [errors.REQUEST_ID_REUSED] : [];
  return [...voiceRoomReasons, ...room, ...command];
}

/** Body fields of routes whose caller field depends on the body (`RestRoute.fields`). */
const FIELDS_BODY: Partial<Record<RpcName, readonly string[]>> = {
  // Another member's id takes them off the mic (owner or admin); absent: yourself.
  MicDown: ['user_id'],
};

const idempotencyKey = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description: 'The request id when the body has no `request_id` (a retry applies once)',
    },
  },
};

/** The documentation of an RPC's REST route (throws when the tables above miss it). */
export function voiceRouteDoc(method: RpcName, declared: AnyDeclaration): Documented {
  const route = declared.rest!;
  const summary = route.summary;
  const request = jsonSchemaOf(declared.schema);
  const isCommand = declared.kind === 'command';
  const doc: RouteDoc = {
    operationId: operationIdOf(method),
    tag: 'voice rooms',
    access: 'user',
    summary,
    responses: {
      [route.status ?? 200]: 'The result',
      ...(route.creates ? CREATE_REFUSALS : ROOM_REFUSALS),
    },
    refusals: refusalsOf(declared),
    data: replySchemaOf(declared.reply),
    ...(route.path.includes(':room_id')
      ? {
          params: {
            type: 'object',
            required: ['room_id'],
            properties: { room_id: propertyOf(request, 'room_id') },
          },
        }
      : {}),
    ...(isCommand ? { headers: idempotencyKey } : {}),
    ...(route.method === 'GET' ? {} : { body: bodyOf(method, declared, request) }),
  };
  return documented(doc);
}

function bodyOf(method: RpcName, declared: AnyDeclaration, request: JsonSchema): JsonSchema {
  const route = declared.rest!;
  const fields = route.fields ? FIELDS_BODY[method] : route.body;
  if (route.fields && !fields) throw new Error(`voice route ${method}: body not documented`);
  const required = new Set((request.required as string[] | undefined) ?? []);
  const properties: Record<string, JsonSchema> = {};
  const mandatory: string[] = [];
  for (const name of fields ?? []) {
    const fallback = route.defaults?.[name];
    properties[name] = {
      ...propertyOf(request, name),
      ...(fallback !== undefined ? { default: fallback } : {}),
    };
    if (required.has(name) && fallback === undefined && !route.fields) mandatory.push(name);
  }
  if (declared.kind === 'command') {
    properties.request_id = {
      ...propertyOf(request, 'request_id'),
      description: 'Idempotency: a retry with the same id applies once (or Idempotency-Key)',
    };
  }
  return {
    type: 'object',
    properties,
    ...(mandatory.length > 0 ? { required: mandatory } : {}),
  };
}
