/**
 * The REST API's OpenAPI 3 document, generated from the routes by @fastify/swagger and served
 * at `/docs` (Swagger UI) and `/docs/json` by @fastify/swagger-ui (ROOMS_DOCS_ENABLED).
 *
 * The schemas are documentation only. A route carries them in `config.openapi` (see
 * {@link documented}), which Fastify never compiles; the route's own `schema` stays empty, so
 * Fastify's ajv neither validates nor coerces input ("1" stays a string and zod refuses it,
 * with the project's messages) and replies are serialized with JSON.stringify as before (a
 * response schema would switch to fast-json-stringify, which drops unlisted fields). Only
 * the `transform` step below turns `config.openapi` into what @fastify/swagger documents.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { z } from 'zod';
import pkg from '../../../package.json' with { type: 'json' };

export type JsonSchema = Record<string, unknown>;
export type ApiTag =
  | 'accounts'
  | 'voice rooms'
  | 'meetings'
  | 'notifications'
  | 'admin'
  | 'outbox'
  | 'ops'
  | 'rtc callback';
/** Who may call: anyone, a user (bearer JWT), the operator (X-Admin-Token), TRTC (signed). */
export type Access = 'public' | 'user' | 'admin' | 'trtc';

export interface RouteDoc {
  /**
   * The operation's name in the document, unique, in camelCase: what a generated client
   * calls the method (`joinMeeting`, `micUp`).
   */
  readonly operationId: string;
  readonly tag: ApiTag;
  readonly summary: string;
  readonly description?: string;
  readonly access: Access;
  readonly body?: JsonSchema;
  readonly query?: JsonSchema;
  readonly params?: JsonSchema;
  readonly headers?: JsonSchema;
  /**
   * Status → what it means. Under 400 the answer is the envelope `{code: 0, data, …}`, from
   * 400 the error envelope; 400 (bad input) and 401 (bad credentials) are added from the
   * route's input and access.
   */
  readonly responses: Readonly<Record<number, string>>;
  /** The envelope's `data` on success: the route's declared reply ({@link replySchemaOf}). */
  readonly data?: JsonSchema;
  /** Not the REST envelope (health, metrics, the TRTC callback): the answer's own shape. */
  readonly raw?: { readonly contentType?: string; readonly schema: JsonSchema };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Documentation of the route (./openapi.ts); never used to validate or serialize. */
    openapi?: RouteDoc;
  }
}

/** `MicUp` → `micUp`: a declared method's operation id. */
export function operationIdOf(method: string): string {
  return method.charAt(0).toLowerCase() + method.slice(1);
}

/** Route options that document a route: spread them into the route's options. */
export function documented(doc: RouteDoc): { config: { openapi: RouteDoc } } {
  return { config: { openapi: doc } };
}

/** The JSON Schema of what a zod schema accepts (its input side; refinements are not shown). */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0' });
}

/**
 * The JSON Schema of a declared reply (what is sent: its output side). A reply schema named
 * with `.meta({ title })` becomes a named component of the document (see `hoistTitled`).
 */
export function replySchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'output', target: 'openapi-3.0', reused: 'inline' });
}

/** An object schema's property `name` (throws if it has none: the docs must follow the code). */
export function propertyOf(schema: JsonSchema, name: string): JsonSchema {
  const property = (schema.properties as Record<string, JsonSchema> | undefined)?.[name];
  if (!property) throw new Error(`the schema has no property ${name}`);
  return property;
}

const SECURITY: Record<Access, Record<string, string[]>[]> = {
  public: [],
  user: [{ bearer: [] }],
  admin: [{ adminToken: [] }],
  trtc: [{ trtcSign: [] }],
};

const errorEnvelope = {
  title: 'Error',
  type: 'object',
  required: ['code', 'message', 'trace_id', 'time'],
  properties: {
    code: { type: 'integer', description: 'The HTTP status' },
    message: { type: 'string' },
    reason: { type: 'string', description: 'The refusal code of a voice-room rule' },
    trace_id: { type: 'string' },
    time: { type: 'string', example: '2026-04-21 16:30:00' },
  },
};

const okEnvelope = {
  type: 'object',
  required: ['code', 'message', 'data', 'trace_id', 'time'],
  properties: {
    code: { type: 'integer', enum: [0] },
    message: { type: 'string', enum: ['success'] },
    data: { description: 'The answer (see docs/ for each route)' },
    trace_id: { type: 'string', description: 'X-Trace-Id if given, else the request id' },
    time: { type: 'string', example: '2026-04-21 16:30:00' },
  },
};

function withData(data: JsonSchema): JsonSchema {
  return { ...okEnvelope, properties: { ...okEnvelope.properties, data } };
}

/** What @fastify/swagger documents for a route: never given to Fastify itself. */
function swaggerSchemaOf(doc: RouteDoc): FastifySchema {
  const responses: Record<string, JsonSchema> = {};
  const takesInput = doc.body || doc.query || doc.params;
  const all: Record<number, string> = { ...doc.responses };
  if (takesInput && !doc.raw) all[400] ??= 'Invalid input: the message names the field';
  if (doc.access === 'user') all[401] ??= 'No valid bearer token';
  if (doc.access === 'admin') all[401] ??= 'No valid X-Admin-Token (or none configured)';
  if (doc.body && !doc.raw)
    all[415] ??= 'The body is neither JSON nor text (send Content-Type: application/json)';
  if (doc.access === 'user' || doc.access === 'admin') {
    all[503] ??=
      'Unavailable (the database is down, the node drains, the owner cannot be reached): retry, a command with the same request_id';
  }
  for (const [status, description] of Object.entries(all)) {
    const schema = doc.raw
      ? doc.raw.schema
      : Number(status) >= 400
        ? errorEnvelope
        : doc.data
          ? withData(doc.data)
          : okEnvelope;
    responses[status] = { 'x-response-description': description, ...schema };
  }
  return {
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    security: SECURITY[doc.access],
    ...(doc.body ? { body: doc.body } : {}),
    ...(doc.query ? { querystring: doc.query } : {}),
    ...(doc.params ? { params: doc.params } : {}),
    ...(doc.headers ? { headers: doc.headers } : {}),
    ...(doc.raw?.contentType ? { produces: [doc.raw.contentType] } : {}),
    response: responses,
  };
}

/** An operation whose body has no required field takes an empty body too (join, leave…). */
interface Operation {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

function markOptionalBodies(document: { paths?: unknown }): void {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation | undefined>>;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const body = operation?.requestBody;
      const schema = body?.content?.['application/json']?.schema;
      if (body && !(Array.isArray(schema?.required) && schema.required.length > 0)) {
        body.required = false;
      }
    }
  }
}

/**
 * Every schema of the document named with a `title` (the replies' `.meta({ title })`) moves
 * to `components.schemas` under that name, a `$ref` in its place: a client generator then
 * makes one named type of it, shared by every route that answers it. Two different schemas
 * under one name are a bug in the declarations, refused when the document is built.
 */
export function hoistTitled(document: { paths?: unknown; components?: unknown }): void {
  const named: Record<string, JsonSchema> = {};
  const seen = new Map<string, string>();
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (typeof node !== 'object' || node === null) return node;
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) out[key] = visit(value);
    const title = out.title;
    if (typeof title !== 'string' || out.type !== 'object') return out;
    const text = JSON.stringify(out);
    const earlier = seen.get(title);
    if (earlier !== undefined && earlier !== text) {
      throw new Error(`two different schemas are named ${title} in the API document`);
    }
    seen.set(title, text);
    named[title] = out;
    return { $ref: `#/components/schemas/${title}` };
  };
  document.paths = visit(document.paths ?? {});
  if (Object.keys(named).length === 0) return;
  const components = (document.components ?? {}) as { schemas?: Record<string, unknown> };
  document.components = { ...components, schemas: { ...components.schemas, ...named } };
}

/**
 * Registers the document and its UI. Call it before the routes are registered (a plugin
 * registered later, or the routes inside a plugin): it learns them from Fastify's onRoute.
 */
export function registerApiDocs(app: FastifyInstance): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'EchoChat Rooms',
        version: pkg.version,
        description:
          'REST API of a rooms node. Every answer is the envelope `{code, message, data, trace_id, time}`; ' +
          '`code` is 0 on success, else the HTTP status. Input is checked strictly: a field of ' +
          'the wrong JSON type is refused, never converted.',
      },
      servers: [{ url: '/', description: 'The node that serves this document' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          adminToken: { type: 'apiKey', in: 'header', name: 'X-Admin-Token' },
          trtcSign: {
            type: 'apiKey',
            in: 'header',
            name: 'Sign',
            description:
              'base64(HMAC-SHA256(callback key, raw body)), the key of the app named by SdkAppId',
          },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const doc = route.config?.openapi;
      return { schema: doc ? { ...schema, ...swaggerSchemaOf(doc) } : schema, url };
    },
    transformObject: (document) => {
      const openapi = 'openapiObject' in document ? document.openapiObject : {};
      markOptionalBodies(openapi);
      hoistTitled(openapi);
      return openapi;
    },
  });
  void app.register(swaggerUi, {
    routePrefix: '/docs',
    // The UI's own files only. Unlike the plugin's default CSP, no upgrade-insecure-requests:
    // a node reached over plain HTTP (inside a network) would have its scripts upgraded away.
    staticCSP: {
      'default-src': "'self'",
      'base-uri': "'self'",
      'font-src': ["'self'", 'data:'],
      'frame-ancestors': "'self'",
      'img-src': ["'self'", 'data:'],
      'object-src': "'none'",
      'script-src': "'self'",
      'script-src-attr': "'none'",
      'style-src': "'self'",
    },
  });
}
