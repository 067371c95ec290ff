/**
 * The media server's envelope answers exactly as the rooms node's REST edge does: same
 * status, headers that matter and body (but `time`), for success, every error kind, Fastify's
 * own refusals, a crash and an unknown path.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import * as edge from '../edge/http/envelope.js';
import { errors } from '../shared/error-codes.js';
import * as media from './envelope.js';

type Envelope = Pick<typeof media, 'installEnvelopeErrors' | 'sendOk'>;

function app(envelope: Envelope): FastifyInstance {
  const a = Fastify({ bodyLimit: 64 });
  envelope.installEnvelopeErrors(a);
  a.get('/ok', (req, reply) => envelope.sendOk(req, reply, { router_id: 'r1' }));
  a.post('/created', (req, reply) => envelope.sendOk(req, reply, { id: 7 }, 201));
  const failures = {
    token: errors.INTERNAL_TOKEN_INVALID(),
    missing: errors.ROUTER_NOT_FOUND('r9'),
    bad: errors.MEDIA_BAD_PARAMETERS('kind must be audio or video'),
    state: errors.MEDIA_INVALID_STATE('transport already connected'),
    worker: errors.MEDIA_NO_WORKER(),
    limited: errors.LOGIN_RATE_LIMITED.after(2_500, 3),
  };
  for (const [name, error] of Object.entries(failures)) {
    a.get(`/fail/${name}`, () => {
      throw error;
    });
  }
  a.get('/boom', () => {
    throw new Error('secret detail');
  });
  a.post(
    '/schema',
    { schema: { body: { type: 'object', required: ['room_code'] } } },
    (req, reply) => envelope.sendOk(req, reply, null),
  );
  return a;
}

const JSON_TYPE = { 'content-type': 'application/json' };

interface Request {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly payload?: string | object;
  readonly headers?: Record<string, string>;
}

const requests: readonly Request[] = [
  { method: 'GET', url: '/ok', headers: { 'x-trace-id': 'trace-1' } },
  { method: 'POST', url: '/created' },
  ...['token', 'missing', 'bad', 'state', 'worker', 'limited'].map((n): Request => ({
    method: 'GET',
    url: `/fail/${n}`,
  })),
  { method: 'GET', url: '/boom' },
  { method: 'POST', url: '/schema', payload: {} },
  { method: 'POST', url: '/schema', payload: '{"room_code":', headers: JSON_TYPE },
  {
    method: 'POST',
    url: '/schema',
    payload: JSON.stringify({ x: 'y'.repeat(100) }),
    headers: JSON_TYPE,
  },
  { method: 'POST', url: '/schema', payload: 'x', headers: { 'content-type': 'text/x-nope' } },
  { method: 'GET', url: '/no/such/route' },
];

async function answer(a: FastifyInstance, request: Request) {
  const res = await a.inject({
    ...request,
    headers: { 'x-trace-id': 'fixed', ...request.headers },
  });
  const body = res.json<Record<string, unknown>>();
  assert.match(String(body.time), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  return {
    status: res.statusCode,
    type: res.headers['content-type'],
    retryAfter: res.headers['retry-after'],
    body: { ...body, time: 'T' },
  };
}

void describe('media server envelope', () => {
  void it("answers byte for byte as the node's REST edge", async () => {
    const ours = app(media);
    const theirs = app(edge);
    for (const request of requests) {
      const got = await answer(ours, request);
      assert.deepEqual(got, await answer(theirs, request), `${request.method} ${request.url}`);
    }
    await Promise.all([ours.close(), theirs.close()]);
  });

  void it('maps each error kind to its status and reason, and hides a crash', async () => {
    const a = app(media);
    const pick = async (url: string, method: 'GET' | 'POST' = 'GET') => {
      const res = await a.inject({ method, url });
      const { code, message, reason } = res.json<Record<string, unknown>>();
      return [res.statusCode, code, reason, message];
    };
    assert.deepEqual(await pick('/fail/token'), [
      401,
      401,
      'INTERNAL_TOKEN_INVALID',
      'invalid X-Internal-Token',
    ]);
    assert.deepEqual(await pick('/fail/missing'), [
      404,
      404,
      'ROUTER_NOT_FOUND',
      'router r9 not found',
    ]);
    assert.deepEqual((await pick('/fail/state')).slice(0, 3), [409, 409, 'MEDIA_INVALID_STATE']);
    assert.deepEqual((await pick('/fail/worker')).slice(0, 3), [503, 503, 'MEDIA_NO_WORKER']);
    assert.deepEqual(await pick('/boom'), [500, 500, 'INTERNAL', '服务器内部错误']);
    assert.deepEqual((await pick('/schema', 'POST')).slice(0, 3), [400, 400, 'VALIDATION']);
    assert.deepEqual(await pick('/nope'), [404, 404, 'NO_ROUTE', 'not found']);
    const ok = await a.inject({ method: 'GET', url: '/ok', headers: { 'x-trace-id': 'abc' } });
    assert.deepEqual(
      { ...ok.json<Record<string, unknown>>(), time: 'T' },
      { code: 0, message: 'success', data: { router_id: 'r1' }, trace_id: 'abc', time: 'T' },
    );
    await a.close();
  });
});
