/**
 * The OpenAPI document at /docs/json, as a client reads it: every route the node registers is
 * in it (method and path) with a tag, a summary, a security scheme that matches what the route
 * really demands, a description of every response and a body schema where it takes a body.
 * The schemas document and do nothing else: input is still checked by the project's own
 * rules only (no type coercion), and no route carries a schema Fastify would compile.
 * ROOMS_DOCS_ENABLED=false serves no docs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { RouteOptions } from 'fastify';
import pkg from '../../../package.json' with { type: 'json' };
import { startTestHttpApp, type TestHttpApp } from '../../main/testing/http-app-harness.js';

const ADMIN = 'admin-token-for-openapi-tests';
const TAGS = [
  'accounts',
  'voice rooms',
  'meetings',
  'notifications',
  'admin',
  'outbox',
  'ops',
  'rtc callback',
];
/** Keys of a route's `schema` that Fastify compiles (ajv validation or fast-json-stringify). */
const COMPILED = ['body', 'querystring', 'query', 'params', 'headers', 'response'];

type Operation = {
  operationId?: string;
  tags?: string[];
  summary?: string;
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, { schema?: Record<string, any> }> };
  parameters?: { in: string; name: string; required?: boolean; schema: Record<string, any> }[];
  responses?: Record<
    string,
    { description?: string; content?: Record<string, { schema?: Record<string, any> }> }
  >;
};
type Document = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, Record<string, string>>;
    schemas?: Record<string, Record<string, any>>;
  };
};

describe('OpenAPI document at /docs/json', () => {
  let app: TestHttpApp;
  const routes: RouteOptions[] = [];
  let doc: Document;
  const operation = (method: string, url: string): Operation | undefined =>
    doc.paths[url.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
  /** The routes of the API: not HEAD (Fastify adds one per GET), /docs itself or catch-alls. */
  const apiRoutes = () =>
    routes.flatMap((r) =>
      (Array.isArray(r.method) ? r.method : [r.method])
        .filter((m) => m !== 'HEAD' && !r.url.startsWith('/docs') && !r.url.includes('*'))
        .map((method) => ({ method, url: r.url, route: r })),
    );

  before(async () => {
    app = await startTestHttpApp({ ROOMS_ADMIN_TOKEN: ADMIN });
    // The app registers its routes when it starts (ready), so this hook sees all of them.
    app.http.addHook('onRoute', (route) => {
      routes.push(route);
    });
    const res = await app.http.inject({ url: '/docs/json' });
    assert.equal(res.statusCode, 200);
    doc = res.json();
  });
  after(async () => {
    await app?.close();
  });

  it('is OpenAPI 3.1 titled EchoChat Rooms, with the version of package.json', () => {
    assert.match(doc.openapi, /^3\.1\./);
    assert.equal(doc.info.title, 'EchoChat Rooms');
    assert.equal(doc.info.version, pkg.version);
  });

  it('has every registered route, tagged, summarized, with described responses', () => {
    const seen = apiRoutes();
    for (const known of [
      '/healthz',
      '/api/v1/voice/rooms/:room_id/mic/up',
      '/api/v1/admin/outbox',
    ]) {
      assert.ok(
        seen.some((r) => r.url === known),
        `onRoute saw ${known} (all: ${seen.length})`,
      );
    }
    for (const { method, url } of seen) {
      const op = operation(method, url);
      assert.ok(op, `${method} ${url} is documented`);
      assert.equal(op.tags?.length, 1, `${method} ${url}: one tag`);
      assert.ok(TAGS.includes(op.tags[0]!), `${method} ${url}: tag ${op.tags[0]}`);
      assert.ok(op.summary && op.summary.length > 3, `${method} ${url}: summary`);
      const responses = Object.entries(op.responses ?? {});
      assert.ok(responses.length > 0, `${method} ${url}: responses`);
      for (const [status, response] of responses) {
        assert.ok(response.description, `${method} ${url} ${status}: description`);
        assert.notEqual(response.description, 'Default Response', `${method} ${url} ${status}`);
      }
      if (['POST', 'PUT', 'PATCH'].includes(method)) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        assert.equal(schema?.type, 'object', `${method} ${url}: a JSON object body schema`);
      }
    }
  });

  it('is a valid OpenAPI document, every $ref resolving (what a client generator reads first)', async () => {
    // validate() dereferences in place: give it a copy.
    await SwaggerParser.validate(structuredClone(doc) as never);
    assert.deepEqual((doc as { servers?: unknown }).servers, [
      { url: '/', description: 'The node that serves this document' },
    ]);
  });

  it('names every operation once, in camelCase: the method names of a generated client', () => {
    const ids = apiRoutes().map(({ method, url }) => operation(method, url)!.operationId);
    for (const id of ids) assert.match(String(id), /^[a-z][A-Za-z0-9]+$/, String(id));
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
    assert.equal(operation('POST', '/api/v1/meeting/rooms/:code/join')!.operationId, 'joinMeeting');
    assert.equal(operation('POST', '/api/v1/voice/rooms/:room_id/mic/up')!.operationId, 'micUp');
    assert.equal(operation('POST', '/api/v1/meeting/rooms')!.operationId, 'createMeeting');
  });

  it('states the limits the server checks: lengths in characters, page sizes', () => {
    const body = (method: string, url: string) =>
      operation(method, url)!.requestBody!.content!['application/json']!.schema!.properties;
    const create = body('POST', '/api/v1/meeting/rooms');
    assert.deepEqual([create.title.minLength, create.title.maxLength], [1, 200]);
    assert.deepEqual([create.password.minLength, create.password.maxLength], [4, 20]);
    const chat = body('POST', '/api/v1/meeting/rooms/:code/chats');
    assert.deepEqual([chat.content.minLength, chat.content.maxLength], [1, 500]);
    const limit = operation('GET', '/api/v1/meeting/rooms/:code/chats')!.parameters!.find(
      (p) => p.name === 'limit',
    )!;
    assert.match(JSON.stringify(limit), /above 100 it is cut to 100/);
    const room = body('POST', '/api/v1/voice/rooms');
    assert.deepEqual([room.title.minLength, room.title.maxLength], [1, 100]);
  });

  it('gives every API answer a named schema a client generator types', () => {
    const schemas = doc.components.schemas ?? {};
    // Every route of the API answers a named schema; only the TRTC callback answers TRTC's own.
    const routesOfKinds = apiRoutes().filter(
      ({ url }) => url.startsWith('/api/v1/') && !url.startsWith('/api/v1/rtc/'),
    );
    assert.ok(routesOfKinds.length >= 50, `API routes: ${routesOfKinds.length}`);
    for (const { method, url } of routesOfKinds) {
      const op = operation(method, url)!;
      // A download answers the file itself (its refusals are envelopes, checked below).
      if (op.responses?.['200']?.content?.['application/octet-stream']) continue;
      const ok = Object.entries(op.responses ?? {}).filter(([status]) => Number(status) < 400);
      assert.equal(ok.length, 1, `${method} ${url}: one success status`);
      const envelope = ok[0]![1].content?.['application/json']?.schema;
      const ref: unknown = envelope?.properties?.data?.$ref;
      assert.equal(typeof ref, 'string', `${method} ${url}: data is a named schema`);
      const name = (ref as string).replace('#/components/schemas/', '');
      const named = schemas[name];
      assert.equal(named?.type, 'object', `${method} ${url}: ${name} is in components`);
      assert.ok(Object.keys(named.properties ?? {}).length > 0, `${name} has properties`);
      assert.equal(named.additionalProperties, false, `${name} lists every field it sends`);
    }
    // Shared objects are one component, referenced where they appear.
    assert.deepEqual(schemas.MeetingDetail!.properties.room, {
      $ref: '#/components/schemas/Room',
    });
    assert.deepEqual(schemas.MeetingDetail!.properties.participants.items, {
      $ref: '#/components/schemas/Participant',
    });
    assert.ok(schemas.Room!.required.includes('room_code'));
    // The objects a client team names in its code: one component each.
    for (const name of [
      'Room',
      'Participant',
      'ChatMessage',
      'Notification',
      'VoiceRoom',
      'Seat',
      'Member',
      'GiftResult',
      'Error',
    ]) {
      assert.ok(schemas[name], `components.schemas.${name}`);
    }
    assert.deepEqual(schemas.VoiceRoom!.properties.seats.items, {
      $ref: '#/components/schemas/Seat',
    });
    assert.deepEqual(Object.keys(schemas.VoiceMicReply!.properties).sort(), [
      'duplicate',
      'mic_session_id',
      'publish_deadline_ms',
      'room_version',
      'seat_index',
      'state',
    ]);
  });

  it('lists, for every refusal an operation answers, the `reason` codes it can carry', () => {
    /** The `reason` enum of an operation's answer with this status. */
    const reasons = (method: string, url: string, status: number): string[] => {
      const schema = operation(method, url)?.responses?.[status]?.content?.['application/json']
        ?.schema as { allOf?: { properties?: { reason?: { enum?: string[] } } }[] } | undefined;
      return schema?.allOf?.flatMap((part) => part.properties?.reason?.enum ?? []) ?? [];
    };
    for (const { method, url } of apiRoutes().filter((r) => r.url.startsWith('/api/v1/'))) {
      if (url.startsWith('/api/v1/rtc/')) continue; // TRTC's own answers
      for (const status of Object.keys(operation(method, url)?.responses ?? {})) {
        if (Number(status) < 400) continue;
        assert.ok(reasons(method, url, Number(status)).length > 0, `${method} ${url} ${status}`);
      }
    }
    const includes = (method: string, url: string, status: number, codes: string[]) => {
      const listed = reasons(method, url, status);
      for (const code of codes) {
        assert.ok(listed.includes(code), `${method} ${url} ${status}: ${code} in ${listed.join()}`);
      }
    };
    includes('POST', '/api/v1/auth/login', 401, ['INVALID_CREDENTIALS']);
    includes('POST', '/api/v1/auth/login', 429, ['LOGIN_RATE_LIMITED']);
    includes('POST', '/api/v1/voice/rooms/:room_id/mic/up', 400, ['SEAT_OCCUPIED', 'ROOM_CLOSED']);
    includes('POST', '/api/v1/voice/rooms/:room_id/join', 403, ['USER_BANNED']);
    includes('POST', '/api/v1/voice/rooms/:room_id/mic/up', 409, ['REQUEST_ID_REUSED']);
    includes('POST', '/api/v1/meeting/rooms/:code/join', 400, ['PASSWORD_WRONG', 'MEETING_FULL']);
    includes('POST', '/api/v1/meeting/rooms/:code/join', 404, ['MEETING_NOT_FOUND']);
    includes('POST', '/api/v1/meeting/rooms/:code/end', 403, ['HOST_ONLY']);
    includes('POST', '/api/v1/meeting/rooms', 429, ['CREATE_RATE_LIMITED']);
    includes('GET', '/api/v1/users/me', 503, ['DATABASE_UNAVAILABLE']);
    includes('GET', '/api/v1/users/me', 500, ['INTERNAL']);
    // A refusal is documented where it can happen only: a join is no host's call.
    assert.deepEqual(reasons('POST', '/api/v1/meeting/rooms/:code/join', 403), ['MEETING_LOCKED']);
    includes('POST', '/api/v1/meeting/rooms/:code/lock', 403, ['HOST_ONLY']);
    assert.deepEqual(reasons('POST', '/api/v1/meeting/rooms', 404), []);
    // A voice call lists its own refusals: a banned user is no member, so MicUp answers
    // NOT_IN_ROOM, never USER_BANNED; its one 403 is a room whose seats go by application.
    assert.deepEqual(reasons('POST', '/api/v1/voice/rooms/:room_id/mic/up', 403), [
      'SEAT_APPLICATION_REQUIRED',
    ]);
    includes('POST', '/api/v1/voice/rooms/:room_id/mic/up', 400, ['NOT_IN_ROOM']);
  });

  it('writes JSON Schema 2020-12 as OpenAPI 3.1 does: no 3.0 `nullable`, no nested $schema', () => {
    const text = JSON.stringify(doc);
    assert.doesNotMatch(text, /"nullable"/);
    assert.doesNotMatch(text, /"\$schema"/);
  });

  it('documents the security each route demands: bearer, X-Admin-Token, TRTC, or none', async () => {
    assert.deepEqual(doc.components.securitySchemes.bearer, {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    assert.equal(doc.components.securitySchemes.adminToken!.name, 'X-Admin-Token');
    assert.deepEqual(operation('GET', '/healthz')!.security, []);
    for (const { method, url } of apiRoutes()) {
      const schemes = (operation(method, url)!.security ?? []).flatMap((s) => Object.keys(s));
      const expected = url.startsWith('/api/v1/admin/')
        ? ['adminToken']
        : url.startsWith('/api/v1/voice/') ||
            url.startsWith('/api/v1/meeting/') ||
            url.startsWith('/api/v1/notifications') ||
            url.startsWith('/api/v1/users')
          ? ['bearer']
          : url.startsWith('/api/v1/rtc/')
            ? ['trtcSign']
            : [];
      assert.deepEqual(schemes, expected, `${method} ${url}`);
      if (expected.length === 0) continue;
      // What the document says is what the route does: no credentials, no entry.
      const res = await app.http.inject({
        method: method as 'GET',
        url: url.replace(/:\w+/g, 'x1'),
        ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }),
      });
      assert.equal(res.statusCode, 401, `${method} ${url} without credentials`);
    }
  });

  it('documents request bodies from the zod schemas: the body, not the internal request', () => {
    const micUp = operation('POST', '/api/v1/voice/rooms/:room_id/mic/up')!;
    const body = micUp.requestBody!.content!['application/json']!.schema!;
    assert.deepEqual(Object.keys(body.properties).sort(), ['request_id', 'seat_index']);
    assert.equal(body.properties.seat_index.type, 'integer');
    assert.deepEqual(body.required, ['seat_index']);
    const create = operation('POST', '/api/v1/voice/rooms')!.requestBody!.content![
      'application/json'
    ]!.schema!;
    assert.deepEqual(create.required, ['title']); // seat_count has a default; the owner is you
    assert.equal(create.properties.seat_count.default, 8);
    assert.equal(create.properties.owner_user_id, undefined);
    const topUp = operation('POST', '/api/v1/admin/wallets/topup')!.requestBody!.content![
      'application/json'
    ]!.schema!;
    assert.deepEqual([...topUp.required].sort(), ['amount', 'request_id', 'user_id']);
    // A user id in JSON is the account id, a number: in every body that names users.
    const kick = operation('POST', '/api/v1/voice/rooms/:room_id/kick')!.requestBody!.content![
      'application/json'
    ]!.schema!;
    const gift = operation('POST', '/api/v1/voice/rooms/:room_id/gifts')!.requestBody!.content![
      'application/json'
    ]!.schema!;
    for (const userId of [
      topUp.properties.user_id,
      kick.properties.user_id,
      gift.properties.receiver_user_ids.items,
    ]) {
      assert.equal(userId.type, 'integer');
    }
    const register = operation('POST', '/api/v1/auth/register')!.requestBody!.content![
      'application/json'
    ]!.schema!;
    assert.deepEqual([...register.required].sort(), ['password', 'username']);
  });

  it('documents the meeting routes from their declarations: body, query, path, refusals', () => {
    const bodyOf = (method: string, url: string) =>
      operation(method, url)!.requestBody!.content!['application/json']!.schema!;
    const paramsOf = (method: string, url: string, where: string) =>
      (operation(method, url)!.parameters ?? []).filter((p) => p.in === where);
    const create = bodyOf('POST', '/api/v1/meeting/rooms');
    // What the client sends: never the caller, the app or the room code.
    assert.deepEqual(Object.keys(create.properties).sort(), [
      'max_members',
      'password',
      'request_id',
      'title',
      'waiting_room',
    ]);
    assert.deepEqual(create.required, ['title']);
    assert.equal(create.properties.max_members.type, 'integer');
    assert.equal(create.properties.max_members.minimum, 2);
    assert.equal(create.additionalProperties, false, 'unknown fields are refused');
    const kick = bodyOf('POST', '/api/v1/meeting/rooms/:code/kick');
    assert.deepEqual(kick.required, ['user_id']);
    assert.equal(kick.properties.user_id.type, 'integer');
    assert.deepEqual(
      paramsOf('GET', '/api/v1/meeting/rooms/mine', 'query')
        .map((p) => p.name)
        .sort(),
      ['before_id', 'limit', 'status'],
    );
    const code = paramsOf('GET', '/api/v1/meeting/rooms/:code', 'path');
    assert.deepEqual(
      code.map((p) => [p.name, p.required]),
      [['code', true]],
    );
    assert.match('835-000-036', new RegExp(code[0]!.schema.pattern));
    assert.doesNotMatch('835000036', new RegExp(code[0]!.schema.pattern));
    // The host's calls, and the join a locked meeting refuses (MEETING_LOCKED).
    const forbidding = [
      ...['end', 'transfer-host', 'kick', 'lock', 'mute-all', 'self-unmute', 'join'],
      ...['waiting-room', 'waiting', 'waiting/admit', 'waiting/deny'],
      ...['recordings/start', 'recordings/stop'],
    ];
    const meetingRoutes = apiRoutes().filter((r) => r.url.startsWith('/api/v1/meeting/'));
    assert.ok(meetingRoutes.length >= 10, `meeting routes: ${meetingRoutes.length}`);
    for (const { method, url } of meetingRoutes) {
      const statuses = Object.keys(operation(method, url)!.responses ?? {});
      assert.ok(statuses.includes('400'), `${method} ${url}: 400`);
      assert.equal(statuses.includes('404'), url.includes('/:code'), `${method} ${url}: 404`);
      const forbids = forbidding.some((action) => url.endsWith(`/:code/${action}`));
      assert.equal(statuses.includes('403'), forbids, `${method} ${url}: 403`);
    }
  });

  it('documents ListMembers from its declaration: integer after and limit, a named page', () => {
    const op = operation('GET', '/api/v1/voice/rooms/:room_id/members')!;
    assert.equal(op.operationId, 'listMembers');
    const byName = Object.fromEntries((op.parameters ?? []).map((p) => [`${p.in} ${p.name}`, p]));
    assert.deepEqual(Object.keys(byName).sort(), ['path room_id', 'query after', 'query limit']);
    const { after: afterId, limit } = {
      after: byName['query after']!,
      limit: byName['query limit']!,
    };
    assert.ok(!afterId.required && !limit.required, 'both may be left out');
    // What a generated client types as `after?: number; limit?: number`.
    assert.deepEqual([afterId.schema.type, afterId.schema.minimum], ['integer', 1]);
    assert.deepEqual(
      [limit.schema.type, limit.schema.minimum, limit.schema.default, limit.schema.maximum],
      ['integer', 1, 50, undefined], // a larger limit is taken as 200, not refused
    );
    assert.match(JSON.stringify(limit), /above 200 it is cut to 200/);
    const data = op.responses!['200']!.content!['application/json']!.schema!.properties.data;
    assert.deepEqual(data, { $ref: '#/components/schemas/VoiceMemberPage' });
    const page = doc.components.schemas!.VoiceMemberPage!;
    assert.deepEqual(Object.keys(page.properties).sort(), [
      'app_code',
      'members',
      'next_after',
      'online_count',
      'room_id',
    ]);
    assert.deepEqual(page.properties.members.items, { $ref: '#/components/schemas/Member' });
    assert.deepEqual(
      page.properties.next_after.anyOf.map((s: { type: string }) => s.type),
      ['integer', 'null'],
    );
    const reasons = JSON.stringify(op.responses!['404']);
    assert.match(reasons, /ROOM_NOT_FOUND/);
    assert.match(JSON.stringify(op.responses!['400']), /INVALID_ARGUMENT/);
  });

  it('documents the notification routes: before_id and limit (1-50, default 20), the id', () => {
    const list = operation('GET', '/api/v1/notifications')!.parameters ?? [];
    const byName = Object.fromEntries(list.map((p) => [p.name, p]));
    assert.deepEqual(Object.keys(byName).sort(), ['before_id', 'limit']);
    assert.ok(list.every((p) => p.in === 'query' && !p.required));
    assert.equal(byName.before_id!.schema.type, 'integer');
    assert.equal(byName.before_id!.schema.minimum, 1);
    assert.deepEqual(
      [byName.limit!.schema.minimum, byName.limit!.schema.maximum, byName.limit!.schema.default],
      [1, 50, 20],
    );
    const read = operation('POST', '/api/v1/notifications/:id/read')!;
    assert.deepEqual(
      (read.parameters ?? []).map((p) => [p.in, p.name, p.required]),
      [['path', 'id', true]],
    );
    assert.ok(read.responses?.['404']?.description, 'an unknown id: 404');
  });

  it('leaves Fastify nothing to validate, coerce or serialize with: no compiled schema keys', () => {
    for (const { method, url, route } of apiRoutes()) {
      const compiled = Object.keys(route.schema ?? {}).filter((k) => COMPILED.includes(k));
      assert.deepEqual(compiled, [], `${method} ${url}`);
    }
  });

  it('still refuses "seat_index": "1" with the project\'s message (no coercion)', async () => {
    const login = async (username: string) => {
      const creds = { username, password: 'secret123' };
      await app.http.inject({ method: 'POST', url: '/api/v1/auth/register', payload: creds });
      const res = await app.http.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: creds,
      });
      return { authorization: `Bearer ${res.json().data.access_token}` };
    };
    const headers = await login('openapi_alice');
    const created = await app.http.inject({
      method: 'POST',
      url: '/api/v1/voice/rooms',
      headers,
      payload: { title: 'Docs' },
    });
    const roomId = created.json().data.room_id as string;
    const join = { method: 'POST', url: `/api/v1/voice/rooms/${roomId}/join`, headers } as const;
    assert.equal((await app.http.inject(join)).statusCode, 200); // so seat 1 would be hers
    const before = (await app.http.inject({ url: `/api/v1/voice/rooms/${roomId}`, headers })).json()
      .data;

    const res = await app.http.inject({
      method: 'POST',
      url: `/api/v1/voice/rooms/${roomId}/mic/up`,
      headers,
      payload: { seat_index: '1' },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().code, 400);
    assert.equal(res.json().message, 'seat_index: Invalid input: expected number, received string');
    const after = (await app.http.inject({ url: `/api/v1/voice/rooms/${roomId}`, headers })).json()
      .data;
    assert.deepEqual(after, before);

    // The query string too: the lobby's digits-only rule, not a schema's integer.
    const lobby = await app.http.inject({ url: '/api/v1/voice/rooms?limit=1e1', headers });
    assert.equal(lobby.statusCode, 400);
    assert.equal(lobby.json().message, 'not a decimal integer: 1e1');
  });

  it('documents the statuses a caller really gets: 415 for a body not JSON, 409 for a reused id', async () => {
    const documented = (method: string, url: string, status: number) =>
      operation(method, url)?.responses?.[String(status)]?.description;
    const errorShape = (body: any) => {
      assert.deepEqual(
        Object.keys(body)
          .sort()
          .filter((k) => k !== 'reason'),
        ['code', 'message', 'time', 'trace_id'],
      );
    };
    const notJson = await app.http.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/xml' },
      payload: '<login/>',
    });
    assert.equal(notJson.statusCode, 415, notJson.body);
    errorShape(notJson.json());
    assert.ok(documented('POST', '/api/v1/auth/login', 415), 'login documents 415');

    const creds = { username: 'openapi_bob', password: 'secret123' };
    await app.http.inject({ method: 'POST', url: '/api/v1/auth/register', payload: creds });
    const token = (
      await app.http.inject({ method: 'POST', url: '/api/v1/auth/login', payload: creds })
    ).json().data.access_token as string;
    const create = (title: string) =>
      app.http.inject({
        method: 'POST',
        url: '/api/v1/meeting/rooms',
        headers: { authorization: `Bearer ${token}` },
        payload: { title, request_id: 'docs-create-1' },
      });
    assert.equal((await create('First')).statusCode, 201);
    const reused = await create('Another title');
    assert.equal(reused.statusCode, 409, reused.body);
    errorShape(reused.json());
    assert.match(String(documented('POST', '/api/v1/meeting/rooms', 409)), /REQUEST_ID_REUSED/);
    const errors = doc.components.schemas?.Error;
    assert.deepEqual(errors?.required, ['code', 'message', 'reason', 'trace_id', 'time']);
  });

  it('serves Swagger UI at /docs, only the UI files by its CSP', async () => {
    const res = await app.http.inject({ url: '/docs' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
  });
});

describe('ROOMS_DOCS_ENABLED=false', () => {
  let app: TestHttpApp;
  before(async () => {
    app = await startTestHttpApp({ ROOMS_DOCS_ENABLED: 'false' });
  });
  after(async () => {
    await app?.close();
  });

  it('serves neither the document nor the UI, and the API as before', async () => {
    for (const url of ['/docs', '/docs/json', '/docs/static/index.html']) {
      assert.equal((await app.http.inject({ url })).statusCode, 404, url);
    }
    assert.equal((await app.http.inject({ url: '/healthz' })).statusCode, 200);
  });
});
