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
import { codesOfKind, errors } from '../../shared/error-codes.js';
import type { ErrorKind } from '../../shared/errors.js';
import { httpStatusOf } from '../../shared/http-envelope.js';

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

/** A refusal an operation may answer: its code (the envelope's `reason`) and kind (its status). */
export interface Refusal {
  readonly code: string;
  readonly kind: ErrorKind;
}

/**
 * The refusals a call declares by name, each with its kind: a room kind's own reason (from
 * `rules`, its table) or a code of the error registry.
 */
export function declaredRefusals(names: readonly string[], rules: readonly Refusal[]): Refusal[] {
  const kinds = new Map(rules.map((r) => [r.code, r.kind]));
  return names.map((code) => {
    const kind = kinds.get(code);
    if (kind) return { code, kind };
    const registered = (errors as Record<string, Refusal | undefined>)[code];
    if (!registered) throw new Error(`refusal ${code} is in neither table`);
    return registered;
  });
}

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
   * 400 the error envelope; the statuses of the refusals (below, and those every route of
   * its access and input can give) are added with a default meaning.
   */
  readonly responses: Readonly<Record<number, string>>;
  /**
   * The refusals of the operation itself (its room kind's rules, its limits). Each becomes a
   * value of the `reason` enum of its status's answer; the refusals every operation of its
   * access and input can give (bad input, bad token, the database down…) are added here.
   */
  readonly refusals?: readonly Refusal[];
  /** The envelope's `data` on success: the route's declared reply ({@link replySchemaOf}). */
  readonly data?: JsonSchema;
  /** Not the REST envelope (health, metrics, the TRTC callback): the answer's own shape. */
  readonly raw?: { readonly contentType?: string; readonly schema: JsonSchema };
  /**
   * A download: its successes (200, 206) are the file's bytes of this type; its refusals
   * the error envelope, as for any route.
   */
  readonly file?: { readonly contentType: string };
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
  return withoutDialect(z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }));
}

/**
 * The JSON Schema of a declared reply (what is sent: its output side). A reply schema named
 * with `.meta({ title })` becomes a named component of the document (see `hoistTitled`).
 */
export function replySchemaOf(schema: z.ZodType): JsonSchema {
  return withoutDialect(
    z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12', reused: 'inline' }),
  );
}

/** OpenAPI 3.1's schemas are JSON Schema 2020-12 already: a nested `$schema` is noise. */
function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
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
  required: ['code', 'message', 'reason', 'trace_id', 'time'],
  properties: {
    code: { type: 'integer', description: 'The HTTP status' },
    message: { type: 'string', description: "Human-readable: the seed's text where it has one" },
    reason: {
      type: 'string',
      description: "The refusal's stable code: each answer lists the ones it can carry",
    },
    trace_id: { type: 'string' },
    time: { type: 'string', examples: ['2026-04-21 16:30:00'] },
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
    time: { type: 'string', examples: ['2026-04-21 16:30:00'] },
  },
};

function withData(data: JsonSchema): JsonSchema {
  return { ...okEnvelope, properties: { ...okEnvelope.properties, data } };
}

/** The error envelope of one answer: `reason` is one of these codes. */
function refusedWith(reasons: ReadonlySet<string>): JsonSchema {
  return {
    allOf: [
      errorEnvelope,
      { type: 'object', properties: { reason: { type: 'string', enum: [...reasons].sort() } } },
    ],
  };
}

const ofKind = (kind: ErrorKind): Refusal[] => codesOfKind(kind).map((name) => errors[name]);
/** Input the server refuses before any rule runs: the schema (zod), or the body's parser. */
const BAD_INPUT: readonly Refusal[] = [
  errors.VALIDATION,
  errors.BAD_REQUEST,
  errors.INVALID_ARGUMENT,
];
const BAD_TOKEN: readonly Refusal[] = [
  errors.TOKEN_MISSING,
  errors.TOKEN_INVALID,
  errors.USER_NOT_FOUND,
];

/**
 * Status → the `reason` codes the operation may answer with it: its own refusals, and what
 * every operation of its access and input may answer. Fastify's own refusals of a body (not
 * JSON: 400, too large: 413, an unknown type: 415) carry VALIDATION.
 */
function reasonsOf(doc: RouteDoc): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  const add = (status: number, code: string) => {
    const set = out.get(status) ?? new Set<string>();
    set.add(code);
    out.set(status, set);
  };
  const refusals: Refusal[] = [...(doc.refusals ?? []), ...ofKind('internal')];
  if (doc.body || doc.query || doc.params) refusals.push(...BAD_INPUT);
  if (doc.access === 'user') refusals.push(...BAD_TOKEN);
  if (doc.access === 'admin') refusals.push(errors.BAD_ADMIN_TOKEN);
  // Every route reaches the database (or the room's owner): any may be unavailable.
  refusals.push(...ofKind('unavailable'));
  for (const refusal of refusals) add(httpStatusOf(refusal.kind), refusal.code);
  if (doc.body) for (const status of [413, 415]) add(status, errors.VALIDATION.code);
  return out;
}

/** What a status means when the route's doc does not say (it comes from a refusal's kind). */
const DEFAULT_MEANING: Readonly<Record<number, string>> = {
  400: 'Invalid input, or not possible in the current state: see `reason`',
  401: 'No valid credentials',
  403: 'Not allowed: see `reason`',
  404: 'Not found: see `reason`',
  409: 'A conflict: see `reason`',
  413: 'The body is larger than the server takes',
  415: 'The body is neither JSON nor text (send Content-Type: application/json)',
  429: 'Too many requests: wait Retry-After seconds',
  500: 'A bug: the message is fixed, the details are in the server log',
  503: 'Unavailable (the database is down, the node drains, the owner cannot be reached): retry, a command with the same request_id',
};

/** What @fastify/swagger documents for a route: never given to Fastify itself. */
function swaggerSchemaOf(doc: RouteDoc): FastifySchema {
  const responses: Record<string, JsonSchema> = {};
  const reasons = doc.raw ? new Map<number, Set<string>>() : reasonsOf(doc);
  const all: Record<number, string> = { ...doc.responses };
  if (doc.body || doc.query || doc.params) {
    if (!doc.raw) all[400] ??= 'Invalid input: the message names the field';
  }
  if (doc.access === 'user') all[401] ??= 'No valid bearer token';
  if (doc.access === 'admin') all[401] ??= 'No valid X-Admin-Token (or none configured)';
  for (const status of reasons.keys()) all[status] ??= DEFAULT_MEANING[status] ?? 'See `reason`';
  for (const [status, description] of Object.entries(all)) {
    const known = reasons.get(Number(status));
    if (doc.file && Number(status) < 400) {
      const bytes = { type: 'string', format: 'binary' };
      responses[status] = { description, content: { [doc.file.contentType]: { schema: bytes } } };
      continue;
    }
    const schema = doc.raw
      ? doc.raw.schema
      : Number(status) >= 400
        ? known
          ? refusedWith(known)
          : errorEnvelope
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
      openapi: '3.1.0',
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
