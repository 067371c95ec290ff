/**
 * The WebSocket protocol's AsyncAPI 3.0 document, made from the declarations the hub
 * validates with (./ws-declarations.ts) and served at `GET /docs/asyncapi.json` (with the
 * OpenAPI docs, ROOMS_DOCS_ENABLED). One channel, `/ws`; per C→S event a `send` operation
 * whose reply is its ACK; per ACK and per S→C frame a `receive` operation. Payloads are the
 * declared zod schemas as JSON Schema (draft 2020-12 output: the C→S side is what the
 * hub accepts, the answers what is sent), wrapped in the frame envelope.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import pkg from '../../../package.json' with { type: 'json' };
import type { RoomFrameMeta } from '../../realtime/frames.js';
import { CLOSE } from './protocol.js';
import {
  reasonsOf,
  type WsEventDeclaration,
  type WsFrameDeclaration,
  type WsProtocol,
} from './ws-declarations.js';

type JsonSchema = Record<string, unknown>;

/** Why each close code is sent (a code added to CLOSE must be described here). */
const CLOSE_CODES: Readonly<Record<keyof typeof CLOSE, string>> = {
  unauthorized: 'missing or invalid token (the handshake completes, then the server closes)',
  slowConsumer: 'the client read too slowly: its send buffer passed the limit; reconnect, refetch',
  rateLimited: 'too many frames, or too many requests waiting; reconnect later, send slower',
  goingAway: 'the node is shutting down; reconnect (any node), refetch',
  tryAgainLater: 'the token could not be checked right now; reconnect after a short delay',
  badConnectionId: 'connection_id or replaces is not 8-64 of A-Z a-z 0-9 - _, or they are equal',
  replaced: 'a newer socket of this client named this one in `replaces`; do not reconnect it',
};

/** The keys every room event frame's data carries (src/realtime/frames.ts `roomEventFrame`). */
const RoomFrameMetaSchema = z.strictObject({
  app_code: z.string(),
  room_id: z.string(),
  room_version: z.int(),
  prev_room_version: z.int().nullable().describe('null: unknown (the room just moved)'),
  event_id: z.string(),
  prev_event_id: z.string().nullable().describe('null: unknown (the room just moved)'),
});
// Exactly RoomFrameMeta, both ways.
const _meta: [RoomFrameMeta, z.output<typeof RoomFrameMetaSchema>] = [] as unknown as [
  z.output<typeof RoomFrameMetaSchema>,
  RoomFrameMeta,
];
void _meta;

/** A zod schema as JSON Schema, without `$schema` (it sits inside a document). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io });
  return rest;
}

/** The room frame keys added to each object branch of a frame's data (the kind's `room_id` wins). */
function withRoomMeta(schema: JsonSchema): JsonSchema {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) {
      return { ...schema, [key]: branches.map((b) => withRoomMeta(b as JsonSchema)) };
    }
  }
  const meta = jsonSchema(RoomFrameMetaSchema, 'output');
  const own = (schema.properties ?? {}) as JsonSchema;
  return {
    ...schema,
    properties: { ...(meta.properties as JsonSchema), ...own },
    required: [
      ...new Set([...((schema.required as string[] | undefined) ?? []), ...(meta.required as [])]),
    ],
  };
}

const time = { type: 'string', format: 'date-time', description: 'ISO 8601' };
const seq = {
  type: 'integer',
  description: 'The client’s number for the request (default 0); its ACK returns it',
};

/** `{event, seq, data}`: what the client sends. */
function requestEnvelope(d: WsEventDeclaration): JsonSchema {
  return {
    type: 'object',
    required: ['event'],
    properties: {
      event: { const: d.event },
      seq,
      data: { ...jsonSchema(d.payload, 'input'), description: 'Default {}' },
    },
  };
}

/** `<event>.ack`: `code` 0 and the declared data, or `code` -1, `message` and a declared `reason`. */
function ackEnvelope(d: WsEventDeclaration): JsonSchema {
  const base = { event: { const: `${d.event}.ack` }, seq: { type: 'integer' }, time };
  return {
    oneOf: [
      {
        type: 'object',
        required: ['event', 'seq', 'time', 'code', 'data'],
        additionalProperties: false,
        properties: { ...base, code: { const: 0 }, data: jsonSchema(d.ack, 'output') },
      },
      {
        type: 'object',
        required: ['event', 'seq', 'time', 'code', 'data', 'message', 'reason'],
        additionalProperties: false,
        properties: {
          ...base,
          code: { const: -1 },
          data: { type: 'object', maxProperties: 0 },
          message: { type: 'string', description: 'For people (the seed’s Chinese text)' },
          reason: { type: 'string', enum: reasonsOf(d), description: 'The stable refusal code' },
        },
      },
    ],
  };
}

/** `{event, data, code: 0, time}`: a frame the server pushes. */
function frameEnvelope(f: WsFrameDeclaration): JsonSchema {
  const data = jsonSchema(f.data, 'output');
  return {
    type: 'object',
    required: ['event', 'data', 'code', 'time'],
    additionalProperties: false,
    properties: {
      event: { const: f.event },
      data: f.to === 'room-event' ? withRoomMeta(data) : data,
      code: { const: 0 },
      time,
    },
  };
}

const AUDIENCE: Readonly<Record<WsFrameDeclaration['to'], string>> = {
  'room-event':
    'A committed room event, to every socket following the room; its data also has the room ' +
    'frame keys (room_version, event_id and their prev_*: see docs/protocol.md)',
  room: 'To every socket following the room, outside the room’s frame chain',
  user: 'To every socket of one user, wherever connected (no subscription needed)',
};

/** A component key (`^[a-zA-Z0-9.\-_]+$`) for an event name or frame id. */
const keyOf = (kind: string, name: string) => `${kind}.${name.replace(/[^a-zA-Z0-9._-]+/g, '_')}`;

/** The AsyncAPI 3.0.0 document of these parts of the protocol, for a node reached at `host`. */
export function buildAsyncApi(protocols: readonly WsProtocol[], host = 'localhost'): JsonSchema {
  const events = protocols.flatMap((p) => p.events);
  const frames = protocols.flatMap((p) => p.frames);
  const messages: Record<string, JsonSchema> = {};
  const operations: Record<string, JsonSchema> = {};
  const channel = { $ref: '#/channels/ws' };
  const ref = (key: string) => ({ $ref: `#/channels/ws/messages/${key}` });
  for (const d of events) {
    const send = keyOf('send', d.event);
    const ack = keyOf('ack', d.event);
    messages[send] = {
      name: d.event,
      title: d.event,
      summary: d.summary,
      payload: requestEnvelope(d),
    };
    messages[ack] = {
      name: `${d.event}.ack`,
      title: `${d.event}.ack`,
      summary: `The answer to ${d.event}`,
      payload: ackEnvelope(d),
    };
    operations[send] = {
      action: 'send',
      channel,
      summary: d.summary,
      messages: [ref(send)],
      reply: { channel, messages: [ref(ack)] },
    };
    operations[ack] = { action: 'receive', channel, messages: [ref(ack)] };
  }
  for (const f of frames) {
    const key = keyOf('frame', f.id);
    messages[key] = {
      name: f.event,
      title: f.id,
      summary: f.summary,
      description: AUDIENCE[f.to],
      payload: frameEnvelope(f),
    };
    operations[key] = { action: 'receive', channel, summary: f.summary, messages: [ref(key)] };
  }
  const closeCodes = (Object.keys(CLOSE) as (keyof typeof CLOSE)[]).map((name) => ({
    code: CLOSE[name],
    name,
    description: CLOSE_CODES[name],
  }));
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'EchoChat Rooms WebSocket',
      version: pkg.version,
      description:
        'One WebSocket per client for every room kind. Every message is one JSON object, the ' +
        'envelope {event, seq, data, code, message, time}. Every C→S event the server knows is ' +
        'answered with `<event>.ack` (same seq): code 0 and data, or code -1, message and ' +
        'reason. Unknown events are dropped unanswered. See docs/protocol.md.',
    },
    defaultContentType: 'application/json',
    servers: {
      node: {
        host,
        protocol: 'ws',
        description: 'The node that serves this document (wss behind TLS)',
        security: [{ $ref: '#/components/securitySchemes/token' }],
      },
    },
    channels: {
      ws: {
        address: '/ws',
        title: 'The rooms WebSocket',
        description:
          'Close codes: ' +
          closeCodes.map((c) => `${c.code} (${c.name}): ${c.description}`).join('; ') +
          '; 1006 (no close frame): the peer stopped answering pings.',
        servers: [{ $ref: '#/servers/node' }],
        messages: Object.fromEntries(
          Object.keys(messages).map((k) => [k, { $ref: `#/components/messages/${k}` }]),
        ),
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              required: ['token'],
              properties: {
                token: { type: 'string', description: 'The access token (JWT)' },
                connection_id: {
                  type: 'string',
                  pattern: '^[A-Za-z0-9_-]{8,64}$',
                  description:
                    'Optional: this socket’s id, chosen by the client (random), for a later `replaces`',
                },
                replaces: {
                  type: 'string',
                  pattern: '^[A-Za-z0-9_-]{8,64}$',
                  description:
                    'Optional, on a reconnect: the `connection_id` of the socket this one replaces. ' +
                    `That socket of the same user is cut at once on every node (${CLOSE.replaced}), and ` +
                    'what it made on the media server is released, instead of when it misses a ping',
                },
              },
            },
            bindingVersion: '0.1.0',
          },
        },
        'x-close-codes': closeCodes,
      },
    },
    operations,
    components: {
      messages,
      securitySchemes: {
        token: {
          type: 'httpApiKey',
          name: 'token',
          in: 'query',
          description:
            'The accounts API’s access token, as `/ws?token=<jwt>`; a bad one is closed with ' +
            `${CLOSE.unauthorized}, one that cannot be checked now with ${CLOSE.tryAgainLater}`,
        },
      },
    },
  };
}

/** Serves the document at `/docs/asyncapi.json` (its server is the host the client asked). */
export function registerAsyncApiDocs(app: FastifyInstance, protocols: readonly WsProtocol[]): void {
  const document = buildAsyncApi(protocols);
  app.get('/docs/asyncapi.json', { schema: { hide: true } }, (request, reply) => {
    const host = request.headers.host ?? 'localhost';
    const servers = document.servers as { node: JsonSchema };
    void reply.send({ ...document, servers: { node: { ...servers.node, host } } });
  });
}
