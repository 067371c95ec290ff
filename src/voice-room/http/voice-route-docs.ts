/**
 * The documentation of the voice-room REST routes (../../edge/http/openapi.ts), derived from
 * the RPC declarations of ../api/commands.ts (each route's summary is declared with it): a route's body is the declared body fields (and
 * `request_id` for a command) with their schemas taken from the RPC's request schema; the
 * fields the caller's token fills (`user_id`, `operator_user_id`, …), `app_code` and the path's
 * `room_id` are not body fields. A GET route's query parameters are the ones it declares.
 */
import type { RpcName } from '../api/commands.js';
import type { AnyDeclaration, QueryParam } from '../api/declaration.js';
import { voiceRoomReasons } from '../domain/errors.js';
import { USER_FIELDS } from '../api/requests.js';
import { JsonUserId } from '../../shared/user-id.js';
import { errors } from '../../shared/error-codes.js';
import {
  declaredRefusals,
  documented,
  jsonSchemaOf,
  operationIdOf,
  propertyOf,
  replySchemaOf,
  type JsonSchema,
  type Refusal,
  type RouteDoc,
} from '../../edge/http/openapi.js';

type Documented = ReturnType<typeof documented>;

/** CreateRoom's own refusals (other statuses say what their kind means). */
const CREATE_REFUSALS: Readonly<Record<number, string>> = {
  409: 'Too many open rooms (TOO_MANY_OPEN_ROOMS), or the request_id was used otherwise',
  429: 'Too many creations (CREATE_RATE_LIMITED, with Retry-After)',
};

/** A 400 of a call the room's state may refuse (ROOM_CLOSED, SEAT_OCCUPIED…). */
const STATE_REFUSALS: Readonly<Record<number, string>> = {
  400: "Invalid input, or not possible in the room's state: see `reason`",
};

/**
 * The refusals a room's call may answer: its declaration's (the room's rules for that call),
 * a room id of a meeting, a reused request id. A creation answers the creation limits
 * instead of a room's missing.
 */
function refusalsOf(declared: AnyDeclaration): Refusal[] {
  const room = declared.rest!.creates
    ? [errors.TOO_MANY_OPEN_ROOMS, errors.CREATE_RATE_LIMITED]
    : [errors.ROOM_KIND_MISMATCH];
  const command = declared.kind === 'command' ? [errors.REQUEST_ID_REUSED] : [];
  return [...declaredRefusals(declared.refuses, voiceRoomReasons), ...room, ...command];
}

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
  const refusals = refusalsOf(declared);
  const byState = refusals.some((r) => r.kind === 'illegal_state' || r.kind === 'validation');
  const doc: RouteDoc = {
    operationId: operationIdOf(method),
    tag: 'voice rooms',
    access: 'user',
    summary,
    responses: {
      [route.status ?? 200]: 'The result',
      ...(byState ? STATE_REFUSALS : {}),
      ...(route.creates ? CREATE_REFUSALS : {}),
    },
    refusals,
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
    ...(route.query ? { query: queryOf(route.query) } : {}),
    ...(isCommand ? { headers: idempotencyKey } : {}),
    ...(route.method === 'GET' ? {} : { body: bodyOf(declared, request) }),
  };
  return documented(doc);
}

function bodyOf(declared: AnyDeclaration, request: JsonSchema): JsonSchema {
  const route = declared.rest!;
  const required = new Set((request.required as string[] | undefined) ?? []);
  const properties: Record<string, JsonSchema> = {};
  const mandatory: string[] = [];
  for (const name of route.body ?? []) {
    const fallback = route.defaults?.[name];
    properties[name] = {
      ...jsonPropertyOf(request, name),
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

const jsonUserId = jsonSchemaOf(JsonUserId);

/**
 * A GET route's query parameters as a generated client types them: an integer (a user id
 * too: the account id, `?after=17`), optional; or one of a list of words, required.
 */
function queryOf(params: Readonly<Record<string, QueryParam | undefined>>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, param] of Object.entries(params)) {
    if (!param) continue;
    if (param.kind === 'enum') {
      properties[name] = {
        type: 'string',
        enum: [...param.values],
        description: param.description,
      };
      required.push(name);
      continue;
    }
    properties[name] =
      param.kind === 'integer'
        ? {
            type: 'integer',
            minimum: param.min,
            default: param.default,
            // No `maximum`: a larger value is taken, as the largest.
            description: `${param.description}: decimal digits, default ${param.default}; above ${param.max} it is cut to ${param.max}`,
          }
        : { ...jsonUserId, description: `${param.description} (a user id in decimal)` };
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/** A body field as JSON sends it: a user id is a number (the request schema has its text). */
function jsonPropertyOf(request: JsonSchema, name: string): JsonSchema {
  const property = propertyOf(request, name);
  const users = USER_FIELDS[name as keyof typeof USER_FIELDS];
  if (users === 'one') return jsonUserId;
  if (users === 'many') return { ...property, items: jsonUserId };
  return property;
}
